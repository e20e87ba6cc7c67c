import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { askNode, type ClusterNodeView, nodeSeesHealthyCluster, nodeView } from './cluster-nodes.js';
import { freePort, type RedisServer, startRedis } from './redis-server.js';

/** One server of the cluster; `role` is the one it had at start-up (`masters()` tells the roles now). */
export interface RedisClusterNode {
  readonly port: number;
  readonly pid: number;
  readonly role: 'master' | 'replica';
}

export interface StartRedisClusterOptions {
  /** `--cluster-node-timeout`: how long a silent node takes to be declared failing; default 1000 ms. */
  readonly nodeTimeoutMs?: number;
  /** Start-up bound (servers, `redis-cli --cluster create`, the cluster settling); default 20 s. */
  readonly timeoutMs?: number;
}

/** Three masters and three replicas (`redis-server --cluster-enabled yes`) on loopback ports. */
export interface RedisClusterSet extends AsyncDisposable {
  readonly nodes: readonly RedisClusterNode[];
  /** `127.0.0.1:p1,127.0.0.1:p2,...` of all six: the value of TASKGATE_REDIS_CLUSTER_NODES. */
  readonly nodesSetting: string;
  /** The ports of the masters now, from `CLUSTER NODES` of a live node (failing masters left out). */
  masters(): Promise<number[]>;
  /** The port of the master serving this slot now (`CLUSTER SLOTS`). */
  masterOfSlot(slot: number): Promise<number>;
  /** The port of the master serving this key's slot now (`CLUSTER KEYSLOT`, then `CLUSTER SLOTS`). */
  masterOfKey(key: string): Promise<number>;
  /** Kills a master with SIGKILL by its pid (its replica is promoted after the node timeout). */
  killMaster(port: number): Promise<void>;
  /** Resolves with the port of the replica promoted in place of the dead master, once every live node is `ok`. */
  waitForFailover(deadPort: number, timeoutMs?: number): Promise<number>;
  /** Stops every server this set started, by pid, and removes their directories. Safe to call twice. */
  stop(): Promise<void>;
}

const serverBinary = process.env.REDIS_SERVER_BIN ?? 'redis-server';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** `REDIS_CLI_BIN`, else the `redis-cli` beside `REDIS_SERVER_BIN`, else `redis-cli` on PATH. */
function cliBinary(): string {
  if (process.env.REDIS_CLI_BIN !== undefined) return process.env.REDIS_CLI_BIN;
  if (process.env.REDIS_SERVER_BIN !== undefined) {
    const beside = join(dirname(process.env.REDIS_SERVER_BIN), 'redis-cli');
    if (existsSync(beside)) return beside;
  }
  return 'redis-cli';
}

/** Fails with a clear message unless redis-server is 7.x or later and redis-cli can be run. */
export function assertRedisClusterAvailable(): void {
  const server = spawnSync(serverBinary, ['--version'], { encoding: 'utf8' });
  const version = /v=(\d+)\./.exec(server.stdout ?? '')?.[1];
  if (server.error !== undefined || version === undefined || Number(version) < 7) {
    throw new Error(
      `'${serverBinary}' must be Redis 7 or later for a cluster (found: ${server.stdout?.trim() || 'none'}); ` +
        'install it (scripts/test does: ensure_redis_server) or point REDIS_SERVER_BIN at one',
    );
  }
  const cli = cliBinary();
  const probe = spawnSync(cli, ['--version'], { stdio: 'ignore' });
  if (probe.error !== undefined || probe.status !== 0) {
    throw new Error(
      `'${cli}' not found: install redis-tools (scripts/test does: ensure_redis_server) or set REDIS_CLI_BIN`,
    );
  }
}

/** One cluster-enabled server with its own directory (and so its own `nodes.conf`) and a free bus port. */
async function startNode(nodeTimeoutMs: number): Promise<RedisServer> {
  for (let attempt = 0; ; attempt++) {
    // The bus port defaults to port + 10000, which may be taken or past 65535: choose a free one too.
    const [port, busPort] = [await freePort(), await freePort()];
    try {
      return await startRedis({
        port,
        args: [
          '--cluster-enabled',
          'yes',
          '--cluster-config-file',
          'nodes.conf',
          '--cluster-port',
          String(busPort),
          '--cluster-node-timeout',
          String(nodeTimeoutMs),
          // A replica's first sync starts at once, not after the default 5 s wait for more replicas.
          '--repl-diskless-sync-delay',
          '0',
        ],
      });
    } catch (error) {
      // Another process may have taken one of the ports between probing and binding.
      if (attempt >= 3) throw error;
    }
  }
}

/** `redis-cli --cluster create ... --cluster-replicas 1 --cluster-yes`, killed (by pid) past the deadline. */
function createCluster(ports: readonly number[], deadline: number): Promise<void> {
  const args = ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '1'];
  const child = spawn(cliBinary(), [...args, '--cluster-yes'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => {
        child.kill('SIGKILL');
        reject(new Error(`redis-cli --cluster create did not finish in time:\n${output}`));
      },
      Math.max(0, deadline - Date.now()),
    );
    child.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0 && output.includes('All 16384 slots covered')) resolve();
      else reject(new Error(`redis-cli --cluster create exited with ${code}:\n${output}`));
    });
  });
}

/** Polls `check` every 100 ms until it is true; a failing check counts as false. */
async function until(check: () => Promise<boolean>, deadline: number, what: () => string): Promise<void> {
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(what());
    await sleep(100);
  }
}

/** Starts six servers, joins them into a cluster and resolves once every node sees it whole. */
export async function startRedisCluster(options: StartRedisClusterOptions = {}): Promise<RedisClusterSet> {
  assertRedisClusterAvailable();
  const timeoutMs = options.timeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  const started: RedisServer[] = [];
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> => {
    stopped ??= Promise.all(started.map((server) => server.stop())).then(() => undefined);
    return stopped;
  };
  try {
    // Every start settles before going on, so a failing one still leaves the others to be stopped below.
    const starts = await Promise.allSettled([0, 1, 2, 3, 4, 5].map(() => startNode(options.nodeTimeoutMs ?? 1_000)));
    for (const start of starts) if (start.status === 'fulfilled') started.push(start.value);
    const failed = starts.find((start) => start.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    const ports = started.map((server) => server.port);
    await createCluster(ports, deadline);
    let lastView = '';
    await until(
      async () => {
        const healthy = await Promise.all(ports.map((port) => nodeSeesHealthyCluster(port, 3, 3)));
        if (!healthy.every(Boolean)) lastView = JSON.stringify(await nodeView(ports[0] as number));
        return healthy.every(Boolean);
      },
      deadline,
      () => `the cluster did not settle (state ok, 16384 slots, 3 replicas attached) in ${timeoutMs} ms: ${lastView}`,
    );
    const { nodes: views } = await nodeView(ports[0] as number);
    const nodes = started.map((server) => ({
      port: server.port,
      pid: server.pid,
      role: views.find((view) => view.port === server.port)?.role ?? 'replica',
    }));
    return clusterHandle(started, nodes, stop);
  } catch (error) {
    await stop();
    throw error;
  }
}

function clusterHandle(
  servers: readonly RedisServer[],
  nodes: readonly RedisClusterNode[],
  stop: () => Promise<void>,
): RedisClusterSet {
  const killed = new Set<number>();
  const slotsOfKilled = new Map<number, ClusterNodeView['slots']>();
  const livePort = (): number => {
    const port = nodes.find((node) => !killed.has(node.port))?.port;
    if (port === undefined) throw new Error('every node of the cluster is dead');
    return port;
  };
  const masterOfSlot = async (slot: number): Promise<number> => {
    const ranges = (await askNode(livePort(), (client) => client.call('CLUSTER', 'SLOTS'))) as [
      number,
      number,
      [string, number, ...unknown[]],
      ...unknown[],
    ][];
    const range = ranges.find(([first, last]) => slot >= first && slot <= last);
    if (range === undefined) throw new Error(`slot ${slot} is served by no master now`);
    return Number(range[2][1]);
  };
  return {
    nodes,
    nodesSetting: nodes.map((node) => `127.0.0.1:${node.port}`).join(','),
    async masters() {
      const { nodes: views } = await nodeView(livePort());
      return views
        .filter((view) => view.role === 'master' && view.slots.length > 0 && !view.failing)
        .map((view) => view.port);
    },
    masterOfSlot,
    async masterOfKey(key) {
      return await masterOfSlot(Number(await askNode(livePort(), (client) => client.call('CLUSTER', 'KEYSLOT', key))));
    },
    async killMaster(port) {
      const server = servers.find((one) => one.port === port);
      if (server === undefined) throw new Error(`port ${port} is not a node of this cluster`);
      const { nodes: views } = await nodeView(port);
      const me = views.find((view) => view.port === port);
      if (me?.role !== 'master' || me.slots.length === 0) throw new Error(`port ${port} is not a master now`);
      slotsOfKilled.set(port, me.slots);
      killed.add(port);
      // SIGKILL by pid (the directory goes too: a dead master of this set is never restarted).
      await server.stop();
    },
    async waitForFailover(deadPort, timeoutMs = 15_000) {
      const slot = slotsOfKilled.get(deadPort)?.[0]?.[0];
      if (slot === undefined) throw new Error(`port ${deadPort} was not killed with killMaster`);
      const deadline = Date.now() + timeoutMs;
      const live = nodes.filter((node) => !killed.has(node.port)).map((node) => node.port);
      let promoted = deadPort;
      await until(
        async () => {
          promoted = await masterOfSlot(slot);
          if (promoted === deadPort) return false;
          const states = await Promise.all(live.map(async (port) => (await nodeView(port)).info.cluster_state));
          return states.every((state) => state === 'ok');
        },
        deadline,
        () => `no replica took over from the master on port ${deadPort} in ${timeoutMs} ms`,
      );
      return promoted;
    },
    stop,
    [Symbol.asyncDispose]: stop,
  };
}
