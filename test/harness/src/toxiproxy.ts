import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { freePort } from '@taskgate/dev-redis';
import { killOnExit } from './exit-kill.js';

/** The toxics the chaos run injects (Toxiproxy's names); attributes as Toxiproxy documents them. */
export type ToxicType = 'latency' | 'reset_peer' | 'timeout' | 'bandwidth' | 'slow_close' | 'limit_data';

/** One toxic on a proxy: `stream` is the direction (downstream = upstream server → client). */
export interface Toxic {
  readonly name: string;
  readonly type: ToxicType;
  readonly stream?: 'upstream' | 'downstream';
  /** Share of connections it applies to, 0..1 (default 1). */
  readonly toxicity?: number;
  readonly attributes: Readonly<Record<string, number>>;
}

/** A TCP proxy of a Toxiproxy server: clients connect to `port` on 127.0.0.1 and reach `upstream`. */
export interface ToxiproxyProxy {
  readonly name: string;
  readonly port: number;
  readonly upstream: string;
  addToxic(toxic: Toxic): Promise<void>;
  removeToxic(name: string): Promise<void>;
  /** The names of the toxics on the proxy now. */
  toxics(): Promise<string[]>;
}

/** A `toxiproxy-server` process this process started, driven over its HTTP API. */
export interface Toxiproxy extends AsyncDisposable {
  readonly pid: number;
  /** `http://127.0.0.1:<api port>` */
  readonly api: string;
  /** Creates a proxy listening on a free 127.0.0.1 port towards `upstream` (`host:port`). */
  createProxy(name: string, upstream: string): Promise<ToxiproxyProxy>;
  /** Removes every toxic of every proxy. */
  reset(): Promise<void>;
  /** Everything the server wrote so far. */
  output(): string;
  /** Stops the server by its pid (SIGTERM, SIGKILL after 3 s). Safe to call twice. */
  stop(): Promise<void>;
}

const binaryOf = (binary?: string): string => binary ?? process.env.TOXIPROXY_SERVER_BIN ?? 'toxiproxy-server';

async function call(api: string, method: string, path: string, body?: unknown): Promise<unknown> {
  const response = await fetch(`${api}${path}`, {
    method,
    ...(body !== undefined && { headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) }),
    // Removing a toxic waits for the data it holds back: seconds on a loaded machine.
    signal: AbortSignal.timeout(20_000),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`toxiproxy ${method} ${path}: ${response.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

/**
 * Starts `toxiproxy-server -host 127.0.0.1 -port <free>` ($TOXIPROXY_SERVER_BIN, or on PATH: scripts/chaos
 * installs it with ensure_toxiproxy) and resolves once its API answers.
 */
export async function startToxiproxy(options: { readonly binary?: string } = {}): Promise<Toxiproxy> {
  const binary = binaryOf(options.binary);
  const probe = spawnSync(binary, ['-version'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `'${binary}' not found: install Toxiproxy (scripts/chaos does: ensure_toxiproxy) or set TOXIPROXY_SERVER_BIN`,
    );
  }
  const port = await freePort();
  const api = `http://127.0.0.1:${port}`;
  const child: ChildProcess = spawn(binary, ['-host', '127.0.0.1', '-port', String(port)], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const collect = (chunk: Buffer): void => {
    output = (output + chunk.toString()).slice(-20_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const pid = child.pid ?? -1;
  const running = (): boolean => child.exitCode === null && child.signalCode === null;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const kill = (): void => {
    if (running()) child.kill('SIGKILL');
  };
  killOnExit(child);
  let stopping: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopping ??= (async () => {
      if (!running()) return;
      process.kill(pid, 'SIGTERM');
      const timer = setTimeout(kill, 3000);
      await exited;
      clearTimeout(timer);
    })();
    return stopping;
  };

  const deadline = Date.now() + 10_000;
  for (;;) {
    if (!running()) throw new Error(`toxiproxy-server exited at start:\n${output}`);
    if (
      await call(api, 'GET', '/version').then(
        () => true,
        () => false,
      )
    )
      break;
    if (Date.now() > deadline) {
      await stop();
      throw new Error(`toxiproxy-server did not answer within 10 s:\n${output}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const createProxy = async (name: string, upstream: string): Promise<ToxiproxyProxy> => {
    const listenPort = await freePort();
    await call(api, 'POST', '/proxies', { name, listen: `127.0.0.1:${listenPort}`, upstream, enabled: true });
    const base = `/proxies/${encodeURIComponent(name)}`;
    return {
      name,
      port: listenPort,
      upstream,
      async addToxic(toxic) {
        await call(api, 'POST', `${base}/toxics`, {
          name: toxic.name,
          type: toxic.type,
          stream: toxic.stream ?? 'downstream',
          toxicity: toxic.toxicity ?? 1,
          attributes: toxic.attributes,
        });
      },
      async removeToxic(toxicName) {
        await call(api, 'DELETE', `${base}/toxics/${encodeURIComponent(toxicName)}`);
      },
      async toxics() {
        const list = (await call(api, 'GET', `${base}/toxics`)) as Array<{ name: string }>;
        return list.map((toxic) => toxic.name);
      },
    };
  };

  return {
    pid,
    api,
    createProxy,
    reset: async () => void (await call(api, 'POST', '/reset')),
    output: () => output,
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
