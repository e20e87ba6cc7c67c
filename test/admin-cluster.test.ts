import { randomBytes } from 'node:crypto';
import {
  AdminTasks,
  createRedisConnection,
  EventBus,
  Keys,
  type RedisConnectionOptions,
  TaskOutbox,
  TaskStore,
  TaskTrail,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';
import { type RedisClusterSet, startRedisCluster, uniquePrefix } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The operator's scans on a Redis Cluster: every master is scanned in turn (owners' tasks live on all shards),
// and the live view's pattern subscription, which shard channels never reach, is refused.

let cluster: RedisClusterSet;
let redis: Redis;

beforeAll(async () => {
  cluster = await startRedisCluster();
  const options: RedisConnectionOptions = {
    url: 'redis://',
    clusterNodes: cluster.nodesSetting
      .split(',')
      .map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
  };
  redis = createRedisConnection(options, 'command', () => {});
}, 60_000);

afterAll(async () => {
  redis?.disconnect();
  await cluster?.stop();
});

describe('operator reads on a Redis Cluster', () => {
  it('lists the tasks of owners on every shard, page by page, cancels and purges them', async () => {
    const keys = new Keys(uniquePrefix('admin'));
    const tasks = new TaskStore({ redis, keys, cursorSecret: randomBytes(32) });
    const queues = new ToolQueues({ connection: redis, keys });
    const admin = new AdminTasks({
      redis,
      keys,
      tasks,
      outbox: new TaskOutbox({ redis, keys }),
      trail: new TaskTrail(redis, keys),
      catalog: new ToolCatalog({ redis, keys }),
      queues,
    });
    try {
      const created = await Promise.all(
        Array.from({ length: 12 }, (_, i) => tasks.create({ owner: `owner-${i}`, tool: i % 2 === 0 ? 'even' : 'odd' })),
      );
      const shards = new Set(await Promise.all(created.map((task) => cluster.masterOfKey(keys.task(task.taskId)))));
      expect(shards.size).toBe(3);

      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await admin.list({ limit: 5, ...(cursor !== undefined && { cursor }) });
        seen.push(...page.tasks.map((task) => task.taskId));
        cursor = page.nextCursor;
        pages += 1;
      } while (cursor !== undefined && pages < 50);
      expect(new Set(seen)).toEqual(new Set(created.map((task) => task.taskId)));
      const even = await admin.list({ tool: 'even', limit: 500 });
      expect(even.tasks.every((task) => task.tool === 'even')).toBe(true);

      const target = created[3]?.taskId as string;
      expect(await admin.cancel(target, 'by an operator')).toMatchObject({ ok: true, task: { status: 'cancelled' } });
      expect(await admin.cancel(target, 'again')).toEqual({ ok: false, reason: 'terminal', status: 'cancelled' });
      expect(await admin.purge({ status: ['cancelled'] })).toEqual({ scanned: 12, purged: 1 });
      expect(await admin.detail(target)).toBeUndefined();
    } finally {
      await queues.close();
    }
  });

  it('refuses the live view of every task (shard channels are out of reach of patterns)', async () => {
    const bus = new EventBus(redis, new Keys(uniquePrefix('admin')));
    try {
      await expect(bus.onEveryTaskChange(() => {})).rejects.toThrow('need classic pub/sub (not Redis Cluster)');
    } finally {
      await bus.close();
    }
  });
});
