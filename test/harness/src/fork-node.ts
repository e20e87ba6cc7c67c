import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { killOnExit } from './exit-kill.js';

// Resolved here, so a child started in another working directory still finds the TypeScript loader.
const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** Node options that run a TypeScript entry point straight from the workspace sources (no build needed). */
export const SOURCE_EXEC_ARGV: readonly string[] = ['--conditions=taskgate-source', '--import', tsxLoader];

export interface ForkedProcess extends AsyncDisposable {
  readonly child: ChildProcess;
  readonly pid: number;
  /** Resolves with the exit code (or signal) once the process has ended. */
  readonly exited: Promise<number | NodeJS.Signals>;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Sends `signal` to the process by its pid and waits for it to end (SIGKILL after `graceMs`). */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<number | NodeJS.Signals>;
}

/** Forks a TypeScript (or JavaScript) module as a separate Node process running from sources. */
export function forkNode(
  entry: string,
  args: readonly string[] = [],
  env: Readonly<Record<string, string>> = {},
  options: { readonly cwd?: string } = {},
): ForkedProcess {
  const child = fork(entry, [...args], {
    execArgv: [...SOURCE_EXEC_ARGV],
    env: { ...process.env, ...env },
    ...(options.cwd !== undefined && { cwd: options.cwd }),
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  return trackProcess(child);
}

/** A started child process as a ForkedProcess: its output kept, stopped by its pid, killed when the test exits. */
export function trackProcess(child: ChildProcess): ForkedProcess {
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<number | NodeJS.Signals>((resolve) => {
    child.once('exit', (code, signal) => resolve(signal ?? code ?? 0));
  });
  const pid = child.pid ?? -1;
  killOnExit(child);
  const stop = async (signal: NodeJS.Signals = 'SIGTERM', graceMs = 5000): Promise<number | NodeJS.Signals> => {
    if (child.exitCode !== null || child.signalCode !== null) return exited;
    process.kill(pid, signal);
    const timer = setTimeout(() => {
      if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
    }, graceMs);
    const result = await exited;
    clearTimeout(timer);
    return result;
  };
  return {
    child,
    pid,
    exited,
    output: () => output,
    stop,
    [Symbol.asyncDispose]: async () => void (await stop('SIGKILL')),
  };
}
