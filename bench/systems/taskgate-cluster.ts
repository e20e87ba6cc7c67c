import { startRedisCluster } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import type { BenchConfig } from '../lib/config.js';
import type { ProcessSet } from '../lib/processes.js';
import type { McpSubject } from './mcp-subject.js';
import { startTaskgate, startTaskgateProcesses } from './taskgate.js';

/** One master of a topology and a direct admin connection to it (INFO, DBSIZE, SCAN). */
export interface Shard {
  /** `127.0.0.1:port`. */
  readonly address: string;
  readonly redis: Redis;
}

/** taskgate on one topology, as the shard workload measures it. */
export interface ShardedTaskgate {
  /** `single node` or `cluster (3 masters)`. */
  readonly topology: string;
  readonly subject: McpSubject;
  /** The masters: the one server, or the cluster's masters (replicas are not counted). */
  readonly shards: readonly Shard[];
  /** With queue shards: executions per task id, from the workers' logs (BENCH_LOG_EXECUTIONS). */
  executions?(): Map<string, number>;
  /** Stops the processes and servers of this topology (by pid); safe to call twice. */
  stop(): Promise<void>;
}

/** taskgate on its own single redis-server (the same set-up as workloads a–e). */
export async function startTaskgateSingle(
  config: BenchConfig,
  processes: ProcessSet,
  root: string,
): Promise<ShardedTaskgate> {
  const system = await startTaskgate(config, processes, root);
  return {
    topology: 'single node',
    subject: system.subject,
    shards: [{ address: `127.0.0.1:${system.redisServer.port}`, redis: system.redis }],
    async stop() {
      await system.subject.close();
      await Promise.all([...system.gateways, ...system.workers].map((proc) => proc.stop()));
      await system.redis.quit().catch(() => system.redis.disconnect());
      await system.redisServer.stop();
    },
  };
}

/**
 * taskgate on a harness-started Redis Cluster (3 masters + 3 replicas on loopback ports): the same gateway and
 * worker processes, told TASKGATE_REDIS_CLUSTER_NODES (REDIS_URL is then ignored).
 */
export async function startTaskgateCluster(
  config: BenchConfig,
  processes: ProcessSet,
  root: string,
  queueShards = 1,
): Promise<ShardedTaskgate> {
  const cluster = await startRedisCluster({ timeoutMs: 60_000 });
  processes.add('taskgate redis cluster', () => cluster.stop());
  const ports = await cluster.masters();
  const shards = ports.map((port) => ({
    address: `127.0.0.1:${port}`,
    redis: new Redis({ host: '127.0.0.1', port, maxRetriesPerRequest: null }),
  }));
  const closeAdmin = async (): Promise<void> =>
    void (await Promise.all(shards.map(({ redis }) => redis.quit().catch(() => redis.disconnect()))));
  processes.add('cluster admin connections', closeAdmin);
  const sharded = queueShards > 1;
  const redisEnv = {
    TASKGATE_REDIS_CLUSTER_NODES: cluster.nodesSetting,
    REDIS_URL: '',
    ...(sharded && { TASKGATE_QUEUE_SHARDS: String(queueShards), BENCH_LOG_EXECUTIONS: '1' }),
  };
  const pids = cluster.nodes.map((node) => node.pid);
  const name = sharded ? 'taskgate-cluster-sharded' : 'taskgate-cluster';
  const started = await startTaskgateProcesses(config, processes, root, redisEnv, pids, name);
  const executions = (): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const worker of started.workers) {
      for (const match of worker.log().matchAll(/\{"benchExecution":"([^"]+)"\}/g)) {
        const id = match[1] as string;
        counts.set(id, (counts.get(id) ?? 0) + 1);
      }
    }
    return counts;
  };
  return {
    topology: sharded
      ? `cluster (${shards.length} masters), one tool over ${queueShards} queue shards`
      : `cluster (${shards.length} masters)`,
    subject: started.subject,
    shards,
    ...(sharded && { executions }),
    async stop() {
      await started.subject.close();
      await Promise.all([...started.gateways, ...started.workers].map((proc) => proc.stop()));
      await closeAdmin();
      await cluster.stop();
    },
  };
}
