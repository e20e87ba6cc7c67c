import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ForkedProcess, forkNode, scrape } from '@taskgate/test-harness';
import { waitForOutput } from '../gateway/fixtures/processes.js';

const root = fileURLToPath(new URL('../../', import.meta.url));
const legacyWorkerMain = fileURLToPath(new URL('./fixtures/legacy-worker.mjs', import.meta.url));

/** The bridge config of these tests: two existing queues on the legacy Redis, key prefix `legacy`. */
export function bridgeConfig(legacyUrl: string): Record<string, unknown> {
  return {
    connections: { legacy: { url: legacyUrl } },
    tools: [
      {
        name: 'render_report',
        description: 'Renders a report.',
        inputSchema: {
          type: 'object',
          properties: {
            n: { type: 'integer' },
            steps: { type: 'integer' },
            stepMs: { type: 'integer' },
            failTimes: { type: 'integer' },
          },
          required: ['n'],
          additionalProperties: false,
        },
        outputSchema: { type: 'object', properties: { pages: { type: 'integer' } }, required: ['pages'] },
        queue: { name: 'reports', prefix: 'legacy', connection: 'legacy' },
        job: {
          name: 'render',
          options: { attempts: 2, backoff: { type: 'fixed', delay: 100 } },
          data: { n: '$.n', steps: '$.steps', stepMs: '$.stepMs', failTimes: '$.failTimes', origin: 'mcp' },
        },
      },
      {
        name: 'greet',
        description: 'Greets.',
        taskSupport: 'optional',
        inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        queue: { name: 'greetings', prefix: 'legacy', connection: 'legacy' },
        job: { name: 'greet' },
        result: 'text',
      },
    ],
  };
}

const folders: string[] = [];

/** A fresh temporary folder (removed by `removeConfigs`). */
export function configFolder(): string {
  const folder = mkdtempSync(join(tmpdir(), 'taskgate-bridge-'));
  folders.push(folder);
  return folder;
}

/** Writes a bridge config file (JSON is YAML) in a fresh temporary folder; returns its path. */
export function writeConfig(config: unknown, text?: string): string {
  const path = join(configFolder(), 'bridge.yaml');
  writeFileSync(path, text ?? JSON.stringify(config, null, 2));
  return path;
}

/** Removes the folders `writeConfig` made. */
export function removeConfigs(): void {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
}

/** `taskgate bridge --config <path>` from sources; resolves once it is ready. */
export async function forkBridge(env: Record<string, string>, configPath: string): Promise<ForkedProcess> {
  const proc = forkNode(`${root}packages/cli/src/run.ts`, ['bridge', '--config', configPath], {
    TASKGATE_LOCK_DURATION_MS: '1000',
    TASKGATE_STALLED_INTERVAL_MS: '1000',
    TASKGATE_STATUS_CHECK_MS: '500',
    TASKGATE_METRICS_PORT: '0',
    ...env,
  });
  await waitForOutput(proc, /bridge ready/, 90_000);
  return proc;
}

/** The plain BullMQ worker of `queue` in its own process. */
export async function forkLegacyWorker(legacyUrl: string, queue: string): Promise<ForkedProcess> {
  const proc = forkNode(legacyWorkerMain, [legacyUrl, 'legacy', queue]);
  await waitForOutput(proc, /legacy worker ready/);
  return proc;
}

/** The sum of a counter's samples on a metrics endpoint. */
export async function counterSum(port: number, name: string): Promise<number> {
  return (await scrape(`http://127.0.0.1:${port}/metrics`)).value(name);
}

export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
