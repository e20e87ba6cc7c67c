import {
  type ForkedProcess,
  forkNode,
  freePort,
  type RedisClusterSet,
  type RedisSentinelSet,
  type RedisServer,
  type RoundRobinProxy,
  startRedis,
  startRedisCluster,
  startRedisSentinels,
  startRoundRobinProxy,
  uniquePrefix,
} from '@taskgate/test-harness';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';

/** The Redis topologies taskgate runs on; every suite of `test/topology` runs on each. */
export const TOPOLOGIES = ['single', 'cluster', 'sentinel'] as const;
export type Topology = (typeof TOPOLOGIES)[number];

/** Private Redis servers of one topology and the settings that point taskgate's processes at them. */
export interface RedisTopology {
  readonly kind: Topology;
  /** REDIS_URL, or TASKGATE_REDIS_CLUSTER_NODES, or TASKGATE_REDIS_SENTINELS with TASKGATE_REDIS_SENTINEL_NAME. */
  readonly env: Readonly<Record<string, string>>;
  readonly cluster?: RedisClusterSet;
  readonly sentinels?: RedisSentinelSet;
  stop(): Promise<void>;
}

export async function startTopology(kind: Topology): Promise<RedisTopology> {
  if (kind === 'cluster') {
    const cluster = await startRedisCluster();
    // REDIS_URL points nowhere: the cluster nodes setting must be what the processes use.
    const env = { REDIS_URL: 'redis://127.0.0.1:1', TASKGATE_REDIS_CLUSTER_NODES: cluster.nodesSetting };
    return { kind, env, cluster, stop: () => cluster.stop() };
  }
  if (kind === 'sentinel') {
    const sentinels = await startRedisSentinels();
    const env = {
      REDIS_URL: 'redis://127.0.0.1:1',
      TASKGATE_REDIS_SENTINELS: sentinels.sentinels,
      TASKGATE_REDIS_SENTINEL_NAME: sentinels.name,
    };
    return { kind, env, sentinels, stop: () => sentinels.stop() };
  }
  const server: RedisServer = await startRedis();
  return { kind, env: { REDIS_URL: server.url }, stop: () => server.stop() };
}

/** Two gateway processes and a worker process (the `taskgate` CLI with the example tools) behind a proxy. */
export interface Deployment {
  readonly topology: RedisTopology;
  readonly proxy: RoundRobinProxy;
  /** The gateways' own URLs (proxy target 0 and 1). */
  readonly gateways: readonly [string, string];
  readonly worker: ForkedProcess;
  stop(): Promise<void>;
}

const root = new URL('../../', import.meta.url).pathname;

export async function startDeployment(kind: Topology, env: Record<string, string> = {}): Promise<Deployment> {
  const topology = await startTopology(kind);
  const fullEnv = {
    ...topology.env,
    TASKGATE_KEY_PREFIX: uniquePrefix(`topo-${kind}`),
    TASKGATE_CURSOR_SECRET: 'topology-cursor-secret-0123456789',
    TASKGATE_POLL_INTERVAL_MS: '100',
    TASKGATE_PAGE_SIZE: '2',
    TASKGATE_SSE_RETRY_MS: '100',
    // The worker's metrics listener: its own port, so deployments of parallel test files do not collide.
    TASKGATE_METRICS_PORT: String(await freePort()),
    ...env,
  };
  const procs: ForkedProcess[] = [];
  let proxy: RoundRobinProxy | undefined;
  const stop = async (): Promise<void> => {
    await proxy?.close();
    await Promise.all(procs.map((proc) => proc.stop('SIGTERM', 5000)));
    await topology.stop();
  };
  try {
    const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', '@taskgate/examples'], fullEnv);
    procs.push(worker);
    const gateways = await Promise.all([forkGateway(fullEnv), forkGateway(fullEnv)]);
    procs.push(...gateways.map((gateway) => gateway.proc));
    await waitForOutput(worker, /worker ready/, 60_000);
    const urls = [gateways[0].url, gateways[1].url] as const;
    proxy = await startRoundRobinProxy(urls.map((url) => new URL(url).origin));
    return { topology, proxy, gateways: urls, worker, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
