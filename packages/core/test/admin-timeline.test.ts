import { useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { AdminTasks, Keys, TaskOutbox, TaskStore, TaskTrail, ToolCatalog, ToolQueues } from '../src/index.js';
import { CURSOR_SECRET } from './support.js';

describe("the admin view of a task's timeline", () => {
  const redis = useRedis();
  const closing: (() => Promise<void>)[] = [];
  afterEach(async () => {
    await Promise.all(closing.splice(0).map((close) => close()));
  });

  it('puts the end after a progress message of the same millisecond, and the creation first', async () => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    // A store with a pod name keeps the task's trail (created, started, finished).
    const store = new TaskStore({ redis: connection, keys, cursorSecret: CURSOR_SECRET, pod: 'pod-a' });
    const outbox = new TaskOutbox({ redis: connection, keys });
    const queues = new ToolQueues({ connection, keys });
    closing.push(() => queues.close());
    const admin = new AdminTasks({
      redis: connection,
      keys,
      tasks: store,
      outbox,
      trail: new TaskTrail(connection, keys),
      catalog: new ToolCatalog({ redis: connection, keys }),
      queues,
    });
    const task = await store.create({ owner: 'alice', tool: 'report' });
    const entryId = await outbox.append(task.taskId, { type: 'progress', progress: 2, total: 2 });
    await store.finish({ taskId: task.taskId, ownerId: task.ownerId }, { result: { content: [] } });
    // The worst case of a fast tool: its creation, last progress and end all in one millisecond.
    const sameMs = String(entryId?.split('-')[0]);
    await connection.hset(keys.task(task.taskId), 'createdAt', sameMs, 'lastUpdatedAt', sameMs);
    const detail = await admin.detail(task.taskId);
    expect(detail?.timeline.map((entry) => [entry.event, entry.detail])).toEqual([
      ['created', undefined],
      ['progress', '2/2'],
      ['finished', 'completed'],
    ]);
  });
});
