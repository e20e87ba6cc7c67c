import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, TaskStore } from '../src/index.js';

describe('TaskStore', () => {
  const redis = useRedis();
  const store = (limits = {}) =>
    new TaskStore({ redis: redis.connect(), keys: new Keys(redis.prefix), cursorSecret: 'x'.repeat(32), limits });

  it('[CRT-4][GET-2] creates a working task with ISO timestamps', async () => {
    const s = store();
    const created = await s.create({ owner: 'alice', tool: 'sleep' });
    const task = await s.get('alice', created.taskId);
    expect(task.status).toBe('working');
    expect(new Date(task.createdAt).toISOString()).toBe(task.createdAt);
    expect(task.lastUpdatedAt).toBe(task.createdAt);
    expect(task.ttl).toBe(3_600_000);
    expect(task.pollInterval).toBe(1000);
  });

  it('[CNL-1] cancels once, then refuses with the terminal status', async () => {
    const s = store();
    const { taskId } = await s.create({ owner: 'alice' });
    const cancelled = await s.cancel('alice', taskId);
    expect(cancelled.status).toBe('cancelled');
    await expect(s.cancel('alice', taskId)).rejects.toMatchObject({
      code: -32602,
      message: "Cannot cancel task: already in terminal status 'cancelled'",
    });
  });

  it('finishes with an outcome and lists pages', async () => {
    const s = store({ pageSize: 3 });
    const ids = [];
    for (let i = 0; i < 7; i++) ids.push((await s.create({ owner: 'bob' })).taskId);
    const ref = { taskId: ids[0] as string, ownerId: Keys.ownerId('bob') };
    const done = await s.finish(ref, { result: { content: [{ type: 'text', text: 'hi' }] } });
    expect(done.ok && done.task.status).toBe('completed');
    const seen = [];
    let cursor: string | undefined;
    do {
      const page = await s.list('bob', cursor);
      expect(page.tasks.length).toBeLessThanOrEqual(3);
      seen.push(...page.tasks.map((t) => t.taskId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.sort()).toEqual([...ids].sort());
  });
});
