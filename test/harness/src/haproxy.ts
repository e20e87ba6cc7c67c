import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@taskgate/dev-redis';
import { killOnExit } from './exit-kill.js';

/** One server behind HAProxy. */
export interface HaproxyBackend {
  /** Default 127.0.0.1. */
  readonly host?: string;
  readonly port: number;
  /** Port of its health check, when it is not `port` (a worker's metrics port, say). */
  readonly checkPort?: number;
}

export interface StartHaproxyOptions {
  readonly backends: readonly HaproxyBackend[];
  /** `option httpchk GET <path>`; a server is out after one failed check and back after one good one. */
  readonly healthCheck?: {
    readonly path: string;
    /** Host header of the check (a gateway's allowed hosts); default localhost. */
    readonly host?: string;
    /** Milliseconds between checks; default 200. */
    readonly intervalMs?: number;
    /**
     * How long a check may wait for its answer (ms); default 2000. Without one HAProxy allows `intervalMs`, and a
     * loaded machine that answers a check later than 100 ms took a healthy backend out of the rotation.
     */
    readonly timeoutMs?: number;
  };
  /** Listening port on 127.0.0.1; default a free one. */
  readonly port?: number;
  /** The binary; default $HAPROXY_BIN or `haproxy` on PATH. */
  readonly binary?: string;
}

/** A server's state as HAProxy sees it: `UP`, `DOWN`, `MAINT`, `no check` ... */
export type HaproxyServerState = string;

/** An HAProxy process balancing round robin, without affinity, over the backends (servers `s0`, `s1`, ...). */
export interface Haproxy extends AsyncDisposable {
  readonly pid: number;
  readonly port: number;
  /** `http://127.0.0.1:<port>` */
  readonly origin: string;
  /** The generated configuration. */
  readonly config: string;
  /** Everything HAProxy wrote to stdout and stderr so far. */
  output(): string;
  /** Each server's state, by index, from HAProxy's stats socket. */
  states(): Promise<HaproxyServerState[]>;
  /**
   * Each server's state, the sessions (connections) HAProxy has sent it so far and the result of its last
   * health check (`L7OK` passed, `INI` none yet, ...), by index.
   */
  servers(): Promise<Array<{ status: HaproxyServerState; sessions: number; check: string }>>;
  /**
   * Sets a server's administrative state through the stats socket: `maint` takes it out of the rotation
   * (HAProxy then reports `MAINT`), `ready` puts it back (it is `UP` again after its next good check).
   */
  setServerState(index: number, state: 'ready' | 'maint' | 'drain'): Promise<void>;
  /**
   * Resolves once every server is `UP` after a check it passed (HAProxy counts a server `UP` before its first
   * check: its state then says nothing yet); fails after `timeoutMs`.
   */
  waitForHealthy(timeoutMs?: number): Promise<void>;
  /** Resolves once every server is in the given states (e.g. `['UP', 'DOWN']`); fails after `timeoutMs`. */
  waitForStates(expected: readonly HaproxyServerState[], timeoutMs?: number): Promise<void>;
  /** Stops HAProxy by its pid (SIGTERM, SIGKILL after 5 s) and removes its directory. */
  stop(): Promise<void>;
}

/** Fails with a clear message when the binary is missing (scripts/test installs it: ensure_haproxy). */
export function assertHaproxyAvailable(binary = process.env.HAPROXY_BIN ?? 'haproxy'): void {
  const probe = spawnSync(binary, ['-v'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(`'${binary}' not found: install HAProxy (scripts/test does: ensure_haproxy) or set HAPROXY_BIN`);
  }
}

/** HAProxy's configuration: HTTP mode, round robin, SSE-friendly timeouts (long server and tunnel timeouts). */
export function haproxyConfig(
  options: StartHaproxyOptions & { readonly port: number; readonly socket: string },
): string {
  const check = options.healthCheck;
  const inter = check?.intervalMs ?? 200;
  const servers = options.backends.map((backend, index) => {
    const checked =
      check === undefined ? '' : ` check${backend.checkPort === undefined ? '' : ` port ${backend.checkPort}`}`;
    return `  server s${index} ${backend.host ?? '127.0.0.1'}:${backend.port}${checked}`;
  });
  return [
    'global',
    `  stats socket ${options.socket} mode 600 level admin`,
    '  maxconn 4096',
    'defaults',
    '  mode http',
    '  timeout connect 2s',
    '  timeout client 1h',
    '  timeout server 1h',
    '  timeout tunnel 1h',
    '  timeout http-request 30s',
    'frontend mcp',
    `  bind 127.0.0.1:${options.port}`,
    '  default_backend pods',
    'backend pods',
    '  balance roundrobin',
    ...(check === undefined
      ? []
      : [
          `  option httpchk`,
          `  http-check send meth GET uri ${check.path} hdr Host ${check.host ?? 'localhost'}`,
          '  http-check expect status 200',
          `  default-server inter ${inter} fastinter ${inter} downinter ${inter} rise 1 fall 1`,
          `  timeout check ${check.timeoutMs ?? 2000}ms`,
        ]),
    ...servers,
    '',
  ].join('\n');
}

function askSocket(socket: string, command: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const connection = connect(socket, () => connection.end(`${command}\n`));
    connection.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    connection.on('end', () => resolve(answer));
    connection.on('error', reject);
  });
}

/** Starts `haproxy -f <generated cfg> -db` (foreground) on a 127.0.0.1 port; resolves once it answers on its stats socket. */
export async function startHaproxy(options: StartHaproxyOptions): Promise<Haproxy> {
  const binary = options.binary ?? process.env.HAPROXY_BIN ?? 'haproxy';
  assertHaproxyAvailable(binary);
  const dir = await mkdtemp(join(tmpdir(), 'taskgate-haproxy-'));
  const port = options.port ?? (await freePort());
  const socket = join(dir, 'admin.sock');
  const config = haproxyConfig({ ...options, port, socket });
  await writeFile(join(dir, 'haproxy.cfg'), config);
  const child: ChildProcess = spawn(binary, ['-f', join(dir, 'haproxy.cfg'), '-db'], {
    cwd: dir,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const pid = child.pid ?? -1;
  const kill = (): void => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  killOnExit(child);

  const stop = async (): Promise<void> => {
    if (child.exitCode === null && child.signalCode === null) {
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(kill, 5000);
      await exited;
      clearTimeout(timer);
    }
    await rm(dir, { recursive: true, force: true });
  };

  const servers = async (): Promise<Array<{ status: HaproxyServerState; sessions: number; check: string }>> => {
    const [header = '', ...rows] = (await askSocket(socket, 'show stat')).trim().split('\n');
    const columns = header.replace(/^# /, '').split(',');
    const at = (name: string): number => columns.indexOf(name);
    const found: Array<{ status: HaproxyServerState; sessions: number; check: string }> = [];
    for (const row of rows.map((line) => line.split(','))) {
      const name = row[at('svname')] ?? '';
      if (row[at('pxname')] === 'pods' && /^s\d+$/.test(name)) {
        found[Number(name.slice(1))] = {
          status: row[at('status')] ?? '',
          sessions: Number(row[at('stot')] ?? 0),
          check: (row[at('check_status')] ?? '').replace(/^\* ?/, ''),
        };
      }
    }
    return found;
  };
  const states = async (): Promise<HaproxyServerState[]> => (await servers()).map((server) => server.status);

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) {
      await stop();
      throw new Error(`haproxy exited at start:\n${output}\nconfiguration:\n${config}`);
    }
    if (
      await states().then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`haproxy did not start within 10 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  return {
    pid,
    port,
    origin: `http://127.0.0.1:${port}`,
    config,
    output: () => output,
    states,
    servers,
    async setServerState(index, state) {
      const answer = (await askSocket(socket, `set server pods/s${index} state ${state}`)).trim();
      if (answer !== '') throw new Error(`haproxy refused to set s${index} ${state}: ${answer}`);
    },
    async waitForHealthy(timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      for (;;) {
        const now = await servers();
        if (now.length === options.backends.length && now.every((one) => one.status === 'UP' && one.check === 'L7OK')) {
          return;
        }
        if (Date.now() > until) throw new Error(`haproxy servers are not all healthy: ${JSON.stringify(now)}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    async waitForStates(expected, timeoutMs = 10_000) {
      const until = Date.now() + timeoutMs;
      let last: HaproxyServerState[] = [];
      for (;;) {
        last = await states();
        if (expected.every((state, index) => last[index] === state)) return;
        if (Date.now() > until) {
          throw new Error(`haproxy servers are ${JSON.stringify(last)}, not ${JSON.stringify(expected)}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
