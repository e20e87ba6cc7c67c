import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { killOnExit } from '@taskgate/test-harness';
import { waitFor } from './support.js';

const root = fileURLToPath(new URL('../../', import.meta.url));

/** The FastMCP 4 server script of the bridge tests (stdio, or HTTP with PORT set). */
export const FASTMCP4_SCRIPT = fileURLToPath(new URL('./python/fastmcp4_server.py', import.meta.url));

/** The pinned venv's python; installs FastMCP 4 and fastmcp-tasks (once, cached) when missing. */
export async function ensureFastmcp4Python(): Promise<string> {
  const script = 'source scripts/lib/tools.sh && ensure_fastmcp4_venv && echo "$TASKGATE_TOOLS_DIR/fastmcp4-venv"';
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: root });
  return `${stdout.trim().split('\n').at(-1)}/bin/python`;
}

/** The server script over HTTP on `port`, started from the venv's python (its pid is the server's). */
export async function startFastmcp4Http(
  python: string,
  port: number,
): Promise<{ proc: ChildProcess; output: () => string }> {
  const proc = spawn(python, [FASTMCP4_SCRIPT], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  killOnExit(proc);
  let output = '';
  proc.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  proc.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const listening = async () =>
    fetch(`http://127.0.0.1:${port}/mcp`).then(
      () => true,
      () => false,
    );
  await waitFor(listening, 'the FastMCP HTTP server to listen', 60_000);
  return { proc, output: () => output };
}
