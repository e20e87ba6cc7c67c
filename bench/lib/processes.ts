import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SOURCE_EXEC_ARGV } from '@taskgate/test-harness';

/** A Node process the bench started, with its output going to a log file. */
export interface BenchProcess {
  readonly name: string;
  readonly pid: number;
  readonly logFile: string;
  readonly exited: Promise<number | NodeJS.Signals>;
  /** What the process wrote so far. */
  log(): string;
  /** SIGTERM by pid, SIGKILL after `graceMs`; resolves once it has exited. Safe to call twice. */
  stop(graceMs?: number): Promise<void>;
}

/** Every process and server the bench started, stopped (by pid) in reverse order of start. */
export class ProcessSet {
  readonly #stops: { name: string; stop: () => Promise<void> }[] = [];
  readonly #children = new Set<ChildProcess>();

  constructor(readonly logDir: string) {
    // Never leave a child behind, whatever ends this process.
    process.once('exit', () => {
      for (const child of this.#children) {
        if (child.exitCode === null && child.signalCode === null && child.pid !== undefined) {
          try {
            process.kill(child.pid, 'SIGKILL');
          } catch {
            // gone already
          }
        }
      }
    });
  }

  /** Registers something to stop at the end (a redis-server, a proxy, a connection). */
  add(name: string, stop: () => Promise<void>): void {
    this.#stops.push({ name, stop });
  }

  /**
   * Spawns `node <source exec args> entry args…` running TypeScript from the workspace sources, stdout and
   * stderr appended to `<logDir>/<name>.log`. BENCH_NODE_FLAGS adds Node flags to every process the bench
   * starts, e.g. `--cpu-prof --cpu-prof-dir=/tmp/prof` to profile them (not allowed in NODE_OPTIONS);
   * `nodeFlags` adds flags to this one.
   */
  spawnNode(
    name: string,
    entry: string,
    args: readonly string[],
    env: Record<string, string>,
    nodeFlags: readonly string[] = [],
  ): BenchProcess {
    const { BENCH_NODE_FLAGS: extra = '' } = process.env;
    const flags = [...extra.split(' ').filter((flag) => flag !== ''), ...nodeFlags];
    return this.spawn(name, process.execPath, [...flags, ...SOURCE_EXEC_ARGV, entry, ...args], env);
  }

  /** Spawns `command args…` (no shell), stdout and stderr appended to `<logDir>/<name>.log`. */
  spawn(name: string, command: string, args: readonly string[], env: Record<string, string>): BenchProcess {
    const logFile = join(this.logDir, `${name}.log`);
    const fd = openSync(logFile, 'a');
    const child = spawn(command, [...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', fd, fd],
    });
    closeSync(fd);
    this.#children.add(child);
    const pid = child.pid ?? -1;
    const exited = new Promise<number | NodeJS.Signals>((resolve) => {
      child.once('exit', (code, signal) => {
        this.#children.delete(child);
        resolve(signal ?? code ?? 0);
      });
    });
    let stopping: Promise<void> | undefined;
    const stop = (graceMs = 5000): Promise<void> => {
      stopping ??= (async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        process.kill(pid, 'SIGTERM');
        const timer = setTimeout(() => {
          if (child.exitCode === null && child.signalCode === null) process.kill(pid, 'SIGKILL');
        }, graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return stopping;
    };
    this.add(name, stop);
    return { name, pid, logFile, exited, log: () => readFileSync(logFile, 'utf8'), stop };
  }

  /** Stops everything registered, newest first; failures are reported, never thrown. */
  async stopAll(): Promise<void> {
    for (const { name, stop } of this.#stops.splice(0).reverse()) {
      try {
        await stop();
      } catch (error) {
        process.stderr.write(`bench: stopping ${name} failed: ${(error as Error).message}\n`);
      }
    }
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls `check` until it returns true; throws `what` after `timeoutMs`, or at once when `proc` exits. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: { timeoutMs?: number; proc?: BenchProcess; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + (options.timeoutMs ?? 30_000);
  let exited = false;
  void options.proc?.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (
      await Promise.resolve()
        .then(check)
        .catch(() => false)
    )
      return;
    if (exited || Date.now() > deadline) {
      const tail =
        options.proc === undefined ? '' : `\n--- ${options.proc.logFile} ---\n${options.proc.log().slice(-3000)}`;
      throw new Error(`${exited ? 'process exited' : 'timed out'} waiting for ${what}${tail}`);
    }
    await sleep(options.intervalMs ?? 50);
  }
}

/** Resolves once the process has written a line matching `pattern`. */
export function waitForLog(proc: BenchProcess, pattern: RegExp, timeoutMs = 60_000): Promise<void> {
  return waitUntil(`${proc.name} to log ${pattern}`, () => pattern.test(proc.log()), { timeoutMs, proc });
}

/** True once `url` answers 200. */
export async function answers200(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
  await response.body?.cancel();
  return response.status === 200;
}
