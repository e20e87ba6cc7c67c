import { execFile, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { type ForkedProcess, trackProcess } from '@taskgate/test-harness';
import { waitForOutput } from '../gateway/fixtures/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

/**
 * The virtual environment with the pinned Celery and Python bullmq (scripts/lib/tools.sh
 * `ensure_celery_venv` installs it under the ignored .tools/ when missing); its path.
 */
export async function celeryVenv(): Promise<string> {
  const { stdout } = await run(
    'bash',
    ['-c', 'source scripts/lib/tools.sh && ensure_celery_venv && echo "$TASKGATE_TOOLS_DIR/celery-venv"'],
    { cwd: root, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout.trim().split('\n').at(-1) as string;
}

/** The venv's python running `args` in `cwd`, directly (its pid is the process), its output kept. */
export function spawnPython(venv: string, args: readonly string[], cwd: string): ForkedProcess {
  const child = spawn(join(venv, 'bin', 'python'), [...args], {
    cwd,
    env: { ...process.env, PYTHONUNBUFFERED: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return trackProcess(child);
}

/**
 * A Celery worker of test/bridge/celery/tasks.py (prefork, three children: a running task can be terminated),
 * its broker and result backend given on the command line; resolves once it consumes.
 */
export async function startCeleryWorker(venv: string, broker: string, backend: string): Promise<ForkedProcess> {
  const proc = spawnPython(
    venv,
    [
      ...['-m', 'celery', '-A', 'tasks', '--broker', broker, '--result-backend', backend, 'worker'],
      ...['--pool', 'prefork', '--concurrency', '3', '--loglevel', 'info'],
      ...['--without-mingle', '--without-gossip', '--without-heartbeat'],
    ],
    join(root, 'test/bridge/celery'),
  );
  await waitForOutput(proc, /celery@\S+ ready/, 60_000);
  return proc;
}

/** The Python BullMQ worker of `queue` (test/bridge/python/worker.py); resolves once it consumes. */
export async function startPythonBullmqWorker(venv: string, url: string, queue: string): Promise<ForkedProcess> {
  const proc = spawnPython(venv, ['worker.py', url, 'legacy', queue], join(root, 'test/bridge/python'));
  await waitForOutput(proc, /python worker ready/, 60_000);
  return proc;
}
