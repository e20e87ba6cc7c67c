import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@taskgate/dev-redis';
import { connect } from 'amqplib';
import { killOnExit } from './exit-kill.js';

/** A private RabbitMQ node this process started: its own node name, ports, epmd, cookie and data directory. */
export interface RabbitMQ extends AsyncDisposable {
  readonly host: '127.0.0.1';
  /** The AMQP port. */
  readonly port: number;
  /** `amqp://guest:guest@127.0.0.1:<port>/%2F`. */
  readonly url: string;
  /** The Erlang node name (unique per `startRabbitMQ`, kept across `restart`). */
  readonly nodeName: string;
  /** The port of the node's own epmd. */
  readonly epmdPort: number;
  /** The pid of the Erlang VM running the node now (changes with every restart). */
  readonly pid: number;
  /** Stops the node (SIGTERM, then SIGKILL) and starts it again on the same ports and data: durable queues and
   * persistent messages survive. */
  restart(): Promise<void>;
  /** SIGKILL by pid: the node is gone (connections refused) until `start`. */
  kill(): Promise<void>;
  /** SIGTERM: a clean shutdown of the node, gone until `start`. */
  shutdown(): Promise<void>;
  /** Starts the node again after `kill` or `shutdown` (same ports, name and data). */
  start(): Promise<void>;
  /** Runs `rabbitmqctl` against this node (e.g. `['list_queues', 'name', 'messages']`); resolves with stdout. */
  ctl(args: readonly string[]): Promise<string>;
  /** Stops the node and its epmd by pid and removes the data directory. Safe to call twice. */
  stop(): Promise<void>;
}

export interface StartRabbitMQOptions {
  /** How long to wait for the node to accept an AMQP connection (ms); default 90 s (a busy machine is slow). */
  readonly startTimeoutMs?: number;
}

const SBIN = process.env.RABBITMQ_SBIN ?? '/usr/lib/rabbitmq/bin';
const EPMD = process.env.EPMD_BIN ?? 'epmd';
let started = 0;

/** Throws a clear message when RabbitMQ is not installed, instead of an opaque ENOENT later. */
export function assertRabbitMQAvailable(): void {
  if (!existsSync(join(SBIN, 'rabbitmq-server'))) {
    throw new Error(
      `${join(SBIN, 'rabbitmq-server')} is needed and was not found. Install it (Debian/Ubuntu: apt-get install -y ` +
        'rabbitmq-server; `bash scripts/test` does that), or point RABBITMQ_SBIN at the directory of its scripts.',
    );
  }
}

/**
 * Starts a private RabbitMQ node on free loopback ports, resolving once an AMQP connection succeeds. The node has
 * its own epmd (on a port of its own), its own HOME (so its own Erlang cookie) and no plugins; the Erlang VM is
 * started without the shell wrapper's signal proxy, so the pid held is the VM's.
 */
export async function startRabbitMQ(options: StartRabbitMQOptions = {}): Promise<RabbitMQ> {
  assertRabbitMQAvailable();
  const dir = mkdtempSync(join(tmpdir(), 'taskgate-rabbitmq-'));
  const home = join(dir, 'home');
  mkdirSync(home);
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  writeFileSync(join(dir, 'rabbitmq-env.conf'), '');
  writeFileSync(join(dir, 'rabbitmq.conf'), 'disk_free_limit.absolute = 1MB\nloopback_users = none\n');
  const [port, distPort, epmdPort, ctlDistPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const nodeName = `taskgate-${process.pid}-${++started}-${Math.random().toString(36).slice(2, 8)}@localhost`;
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    LANG: 'C.UTF-8',
    HOME: home,
    ERL_EPMD_PORT: String(epmdPort),
    ERL_EPMD_ADDRESS: '127.0.0.1',
    RABBITMQ_NODENAME: nodeName,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_CTL_DIST_PORT_MIN: String(ctlDistPort),
    RABBITMQ_CTL_DIST_PORT_MAX: String(ctlDistPort),
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq.conf'),
    RABBITMQ_ADVANCED_CONFIG_FILE: join(dir, 'advanced.config'),
    RABBITMQ_CONF_ENV_FILE: join(dir, 'rabbitmq-env.conf'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    // A VM that dies writes its crash dump here, never into the checkout.
    ERL_CRASH_DUMP: join(dir, 'erl_crash.dump'),
    // With input allowed, the script execs erl (no proxy process that traps signals); -noinput keeps the VM off
    // the (closed) standard input.
    RABBITMQ_ALLOW_INPUT: 'true',
    RABBITMQ_SERVER_START_ARGS: '-noinput',
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}/%2F`;
  const log = join(dir, 'log', `${nodeName}.log`);
  const timeoutMs = options.startTimeoutMs ?? 90_000;

  // epmd of its own: never the machine's, never another node's; held by pid, kept across restarts.
  const epmd = spawn(EPMD, ['-port', String(epmdPort), '-address', '127.0.0.1'], { env, stdio: 'ignore' });
  killOnExit(epmd);

  let node: ChildProcess | undefined;
  const exited = (child: ChildProcess | undefined): boolean =>
    child === undefined || child.exitCode !== null || child.signalCode !== null;
  const signal = async (name: NodeJS.Signals, graceMs: number): Promise<void> => {
    const child = node;
    if (child === undefined || exited(child)) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill(name);
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await gone;
    clearTimeout(timer);
  };
  const start = async (): Promise<void> => {
    if (!exited(node)) return;
    const child = spawn(join(SBIN, 'rabbitmq-server'), [], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    killOnExit(child);
    let output = '';
    const collect = (chunk: Buffer): void => {
      output = (output + chunk.toString()).slice(-4000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    node = child;
    try {
      await waitForAmqp(child, url, timeoutMs);
    } catch (error) {
      await signal('SIGKILL', 0);
      const tail = existsSync(log) ? readFileSync(log, 'utf8').slice(-4000) : '';
      throw new Error(`${(error as Error).message}\n${output}\n${tail}`);
    }
  };
  const ctl = (args: readonly string[]): Promise<string> =>
    new Promise((resolve, reject) => {
      execFile(
        join(SBIN, 'rabbitmqctl'),
        ['-n', nodeName, ...args],
        { env, timeout: 60_000 },
        (error, stdout, stderr) =>
          error ? reject(new Error(`rabbitmqctl ${args.join(' ')}: ${error.message}\n${stderr}`)) : resolve(stdout),
      );
    });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= (async () => {
      await signal('SIGKILL', 0);
      if (!exited(epmd)) {
        const gone = new Promise<void>((resolve) => epmd.once('exit', () => resolve()));
        epmd.kill('SIGKILL');
        await gone;
      }
      rmSync(dir, { recursive: true, force: true });
    })();
    return stopped;
  };
  try {
    await start();
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    host: '127.0.0.1',
    port,
    url,
    nodeName,
    epmdPort,
    get pid() {
      return node?.pid ?? -1;
    },
    async restart() {
      await signal('SIGTERM', 30_000);
      await start();
    },
    kill: () => signal('SIGKILL', 0),
    shutdown: () => signal('SIGTERM', 30_000),
    start,
    ctl,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}

/** Resolves once an AMQP connection to `url` opens (the node booted); rejects when the node exits or times out. */
async function waitForAmqp(child: ChildProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exit: string | undefined;
  child.once('exit', (code, signal) => {
    exit = `RabbitMQ exited (${signal ?? code}) before accepting connections`;
  });
  for (;;) {
    if (exit !== undefined) throw new Error(exit);
    try {
      const connection = await connect(url, { timeout: 2000 });
      await connection.close();
      return;
    } catch {
      if (Date.now() > deadline) throw new Error(`RabbitMQ at ${url} did not accept a connection in ${timeoutMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}
