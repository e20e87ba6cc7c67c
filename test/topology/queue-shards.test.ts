import {
  closeRedis,
  createRedisConnection,
  Keys,
  queueOfTask,
  type RedisConnectionOptions,
  shardOf,
  shardQueues,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';
import {
  type ForkedProcess,
  forkNode,
  freePort,
  type raw,
  rawCall,
  rawInitialize,
  uniquePrefix,
  waitFor,
} from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';
import { type RedisTopology, startTopology, TOPOLOGIES } from './deployment.js';

// Queue shards on each Redis topology: a tool over three BullMQ queues (TASKGATE_QUEUE_SHARDS=3), two gateway
// processes and two worker processes of the CLI. A task's job is on the shard its id picks, whichever gateway
// made it; the other gateway answers, cancels; a worker killed -9 mid-task leaves the task to the other worker;
// changing the shard count with tasks in flight loses none and runs each once.

const root = new URL('../../', import.meta.url).pathname;
const TOOLS = `${root}test/topology/shard-tools.ts`;
type Message = { result?: Record<string, unknown>; error?: unknown };

const messagesOf = (response: Awaited<ReturnType<typeof raw>>): Message[] =>
  (response.events().length > 0 ? response.events() : [response.json()]) as Message[];

const nodes = (setting: string) =>
  setting.split(',').map((node) => ({ host: node.split(':')[0] as string, port: Number(node.split(':')[1]) }));

function connectionOptions(env: Readonly<Record<string, string>>): RedisConnectionOptions {
  if (env.TASKGATE_REDIS_CLUSTER_NODES !== undefined) {
    return { url: 'redis://', clusterNodes: nodes(env.TASKGATE_REDIS_CLUSTER_NODES) };
  }
  if (env.TASKGATE_REDIS_SENTINELS !== undefined) {
    return {
      url: 'redis://',
      sentinels: nodes(env.TASKGATE_REDIS_SENTINELS),
      sentinelName: env.TASKGATE_REDIS_SENTINEL_NAME as string,
    };
  }
  return { url: env.REDIS_URL as string };
}

/** Executions of a task the workers' outputs show (each writes a line before it runs). */
const executions = (workers: readonly ForkedProcess[], taskId: string): number =>
  workers.reduce((sum, worker) => sum + worker.output().split(`{"shardExecution":"${taskId}"}`).length - 1, 0);

describe.each(TOPOLOGIES)('queue shards on Redis topology %s', (kind) => {
  let topology: RedisTopology;
  let env: Record<string, string>;
  let redis: Redis;
  let keys: Keys;
  let queues: ToolQueues;
  let catalog: ToolCatalog;
  let a: string;
  let b: string;
  const procs: ForkedProcess[] = [];
  const workers: ForkedProcess[] = [];

  const startWorker = async (shards: number): Promise<ForkedProcess> => {
    const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', TOOLS], {
      ...env,
      TASKGATE_QUEUE_SHARDS: String(shards),
      TASKGATE_METRICS_PORT: String(await freePort()),
    });
    procs.push(worker);
    workers.push(worker);
    await waitForOutput(worker, /worker ready/, 60_000);
    return worker;
  };

  const create = async (url: string, sessionId: string, ms: number): Promise<string> => {
    const created = messagesOf(
      await rawCall(url, sessionId, 'tools/call', { name: 'shard_run', arguments: { ms }, task: {} }),
    );
    const task = created[0]?.result?.task as { taskId: string; status: string } | undefined;
    expect(task?.status, JSON.stringify(created)).toBe('working');
    return (task as { taskId: string }).taskId;
  };

  const status = async (url: string, sessionId: string, taskId: string): Promise<string> =>
    String(messagesOf(await rawCall(url, sessionId, 'tasks/get', { taskId }))[0]?.result?.status);

  beforeAll(async () => {
    topology = await startTopology(kind);
    env = {
      ...topology.env,
      TASKGATE_KEY_PREFIX: uniquePrefix(`shards-${kind}`),
      TASKGATE_CURSOR_SECRET: 'queue-shards-cursor-secret-0123456789',
      TASKGATE_POLL_INTERVAL_MS: '100',
      // A killed worker's job is taken over within a few seconds.
      TASKGATE_LOCK_DURATION_MS: '2000',
      TASKGATE_STALLED_INTERVAL_MS: '1000',
    };
    redis = createRedisConnection(connectionOptions(topology.env), 'command', () => {});
    keys = new Keys(env.TASKGATE_KEY_PREFIX);
    queues = new ToolQueues({ connection: redis, keys });
    catalog = new ToolCatalog({ redis, keys });
    const gateways = await Promise.all([forkGateway(env, 60_000), forkGateway(env, 60_000)]);
    procs.push(...gateways.map((gateway) => gateway.proc));
    [a, b] = [gateways[0].url, gateways[1].url];
    await Promise.all([startWorker(3), startWorker(3)]);
  }, 180_000);

  afterAll(async () => {
    await Promise.all(procs.map((proc) => proc.stop('SIGTERM', 5000)));
    await queues?.close();
    if (redis !== undefined) await closeRedis(redis);
    await topology?.stop();
  }, 60_000);

  it('puts the job on the shard the task id picks; the other gateway answers tasks/result', async () => {
    expect((await catalog.get('shard_run'))?.queueShards).toBe(3);
    if (topology.cluster !== undefined) {
      // Each shard's slot lies in its third of the slots: on three masters of equal ranges, one shard each.
      const shards = shardQueues('tool.shard_run', 3);
      const masters = await Promise.all(shards.map((name) => topology.cluster?.masterOfKey(keys.queueSlotKey(name))));
      expect(new Set(masters).size).toBe(3);
    }
    const sessionId = await rawInitialize(a);
    const taskId = await create(a, sessionId, 1500);
    const queue = queueOfTask('tool.shard_run', 3, taskId);
    expect(queue).toBe(shardQueues('tool.shard_run', 3)[shardOf(taskId, 3)]);
    // The job is on that shard (and on no other), under the task's id.
    const job = await queues.queue(queue).getJob(taskId);
    expect(job?.id).toBe(taskId);
    for (const other of shardQueues('tool.shard_run', 3).filter((name) => name !== queue)) {
      expect(await queues.queue(other).getJob(taskId)).toBeUndefined();
    }
    const result = messagesOf(await rawCall(b, sessionId, 'tasks/result', { taskId }));
    expect(result.at(-1)?.result).toMatchObject({ content: [{ type: 'text', text: 'waited 1500 ms' }] });
    expect(executions(workers, taskId)).toBe(1);
  });

  it('spreads tasks over all three shards and runs each once', async () => {
    const sessionId = await rawInitialize(b);
    const ids = await Promise.all(Array.from({ length: 12 }, (_, i) => create(i % 2 ? a : b, sessionId, 50)));
    expect(new Set(ids.map((id) => shardOf(id, 3))).size).toBeGreaterThan(1);
    await waitFor(
      async () => (await Promise.all(ids.map((id) => status(a, sessionId, id)))).every((s) => s === 'completed'),
      'every task completed',
      30_000,
    );
    for (const id of ids) expect(executions(workers, id)).toBe(1);
  });

  it('cancels a running task through the other gateway; its job leaves the shard', async () => {
    const sessionId = await rawInitialize(a);
    const taskId = await create(a, sessionId, 60_000);
    await waitFor(() => executions(workers, taskId) === 1, 'the task runs', 20_000);
    const cancelled = messagesOf(await rawCall(b, sessionId, 'tasks/cancel', { taskId }));
    expect(cancelled[0]?.result).toMatchObject({ taskId, status: 'cancelled' });
    expect(await status(a, sessionId, taskId)).toBe('cancelled');
    const queue = queues.queue(queueOfTask('tool.shard_run', 3, taskId));
    await waitFor(async () => (await queue.getJob(taskId)) === undefined, 'the job is gone', 20_000);
  });

  it('a worker killed -9 mid-task on its shard: the other worker runs the task to completion', async () => {
    const sessionId = await rawInitialize(b);
    const taskId = await create(b, sessionId, 4000);
    await waitFor(() => executions(workers, taskId) === 1, 'the task runs', 20_000);
    const victim = workers.find((worker) => worker.output().includes(`{"shardExecution":"${taskId}"}`));
    expect(victim).toBeDefined();
    await victim?.stop('SIGKILL');
    workers.splice(workers.indexOf(victim as ForkedProcess), 1);
    const survivor = workers[0] as ForkedProcess;
    const result = messagesOf(await rawCall(a, sessionId, 'tasks/result', { taskId }));
    expect(result.at(-1)?.result).toMatchObject({ content: [{ type: 'text', text: 'waited 4000 ms' }] });
    // Run again by the survivor, which consumes the same shard.
    expect(survivor.output()).toContain(`{"shardExecution":"${taskId}"}`);
    expect(await status(a, sessionId, taskId)).toBe('completed');
  }, 60_000);

  it('changing the shard count with tasks in flight loses none and runs each once', async () => {
    const sessionId = await rawInitialize(a);
    const old = workers[0] as ForkedProcess;
    // 24 tasks of 1 s on the one worker left (concurrency 4); it stops (running ones finish), the rest stays on
    // the three old shards while a worker with five shards starts.
    const before = await Promise.all(Array.from({ length: 24 }, (_, i) => create(i % 2 ? a : b, sessionId, 1000)));
    await old.stop('SIGTERM', 20_000);
    workers.splice(workers.indexOf(old), 1);
    const left = await Promise.all(before.map((id) => status(a, sessionId, id)));
    expect(left.filter((s) => s === 'working').length).toBeGreaterThan(0);
    const renewed = await startWorker(5);
    await waitFor(async () => (await catalog.get('shard_run'))?.queueShards === 5, 'the catalog says 5', 20_000);
    expect((await catalog.shardCounts('tool.shard_run')).map((count) => count.shards).sort()).toEqual([3, 5]);
    // Gateways answer catalog reads from memory for up to TASKGATE_TOOL_CACHE_MS (2 s).
    await new Promise((resolve) => setTimeout(resolve, 2500));
    const after = await Promise.all(Array.from({ length: 10 }, (_, i) => create(i % 2 ? a : b, sessionId, 1500)));
    for (const id of after) {
      expect(await queues.queue(queueOfTask('tool.shard_run', 5, id)).getJob(id)).toBeDefined();
    }
    await waitFor(
      async () =>
        (await Promise.all([...before, ...after].map((id) => status(b, sessionId, id)))).every(
          (s) => s === 'completed',
        ),
      'every task completed',
      60_000,
    );
    const all = [old, renewed];
    for (const id of [...before, ...after]) expect(executions(all, id), id).toBe(1);
    // The renewed worker ran tasks the old count's shards still held.
    expect(before.some((id) => renewed.output().includes(`{"shardExecution":"${id}"}`))).toBe(true);
  }, 120_000);
});
