import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './free-port.js';

/** A `redis-server` process this process started, bound to a loopback port. */
export interface RedisServer extends AsyncDisposable {
  readonly host: '127.0.0.1';
  readonly port: number;
  readonly url: string;
  readonly pid: number;
  /** Stops the server by its pid (and removes a temporary working directory). Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartRedisOptions {
  /** Extra `redis-server` arguments, e.g. `['--maxmemory', '64mb']`. */
  readonly args?: readonly string[];
  /** Port to bind; a free one is chosen when omitted (pass the old port to restart a server in place). */
  readonly port?: number;
  /**
   * Working directory for its data. Omitted: a temporary directory, removed on stop, and no persistence
   * (tests). Given: the directory is kept and the server snapshots to it (local development).
   */
  readonly dir?: string;
  /**
   * Append-only file with `appendfsync always` (every write on disk before Redis answers), in `dir`: a server
   * killed and started again on the same `dir` comes back with every acknowledged write.
   */
  readonly appendOnly?: boolean;
}

const binary = process.env.REDIS_SERVER_BIN ?? 'redis-server';

/** Throws a clear message when `redis-server` is not installed, instead of an opaque ENOENT later. */
export function assertRedisServerAvailable(): void {
  try {
    execFileSync(binary, ['--version'], { stdio: 'pipe' });
  } catch {
    throw new Error(
      `'${binary}' is needed and could not be run. Install it (Debian/Ubuntu: apt-get install -y redis-server; ` +
        '`bash scripts/test` and `bash scripts/dev` do that), or point REDIS_SERVER_BIN at the binary.',
    );
  }
}

/** Starts a `redis-server` on 127.0.0.1 and resolves once it accepts connections. */
export async function startRedisServer(options: StartRedisOptions = {}): Promise<RedisServer> {
  assertRedisServerAvailable();
  const temporary = options.dir === undefined;
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'taskgate-redis-'));
  if (!temporary) mkdirSync(dir, { recursive: true });
  const persistence = options.appendOnly
    ? ['--save', '', '--appendonly', 'yes', '--appendfsync', 'always']
    : temporary
      ? ['--save', '', '--appendonly', 'no']
      : ['--save', '60 1', '--appendonly', 'no'];
  for (let attempt = 0; ; attempt++) {
    const port = options.port ?? (await freePort());
    const child = spawn(
      binary,
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        ...persistence,
        '--dir',
        dir,
        '--protected-mode',
        'yes',
        ...(options.args ?? []),
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    try {
      await waitForReady(child, port);
    } catch (error) {
      child.kill('SIGKILL');
      // Another process may have taken the port between probing and binding: try a new one.
      if (options.port === undefined && attempt < 3) continue;
      if (temporary) rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    return serverHandle(child, port, temporary ? dir : undefined);
  }
}

/** What to run at process exit: one kill per server still running (one exit listener for all of them). */
const killAtExit = new Set<() => void>();
let exitHooked = false;

function serverHandle(child: ChildProcess, port: number, temporaryDir: string | undefined): RedisServer {
  const pid = child.pid ?? -1;
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    killAtExit.delete(kill);
    stopped ??= new Promise<void>((resolve) => {
      const done = (): void => {
        if (temporaryDir !== undefined) rmSync(temporaryDir, { recursive: true, force: true });
        resolve();
      };
      if (child.exitCode !== null || child.signalCode !== null) return done();
      child.once('exit', done);
      process.kill(pid, 'SIGKILL');
    });
    return stopped;
  };
  // This process owns that pid: never leave it behind when exiting first.
  if (!exitHooked)
    process.once('exit', () => {
      for (const one of killAtExit) one();
    });
  exitHooked = true;
  killAtExit.add(kill);
  return {
    host: '127.0.0.1',
    port,
    url: `redis://127.0.0.1:${port}`,
    pid,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

function waitForReady(child: ChildProcess, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    let output = '';
    const timer = setTimeout(
      () => fail(new Error(`redis-server on port ${port} did not start in 10 s:\n${output}`)),
      10_000,
    );
    const fail = (error: Error): void => {
      clearTimeout(timer);
      reject(error);
    };
    const onData = (chunk: Buffer): void => {
      output += chunk.toString();
      if (output.includes('Ready to accept connections')) {
        clearTimeout(timer);
        child.stdout?.off('data', onData);
        child.stdout?.resume();
        child.stderr?.resume();
        resolve();
      }
    };
    child.stdout?.on('data', onData);
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.once('error', fail);
    child.once('exit', (code) => fail(new Error(`redis-server on port ${port} exited with ${code}:\n${output}`)));
  });
}
