import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { DEFAULT_TASK_LIMITS, Keys, resolveTaskLimits, type StoredTask, type TaskStore } from '../src/index.js';
import { grantTtl } from '../src/limits/task-limits.js';
import { EXPIRED, makeStore, NOT_FOUND, rejection, waitFor } from './support.js';

const limitError = (limit: number) => ({
  name: 'ProtocolError',
  code: -32010,
  message:
    `Too many active tasks: at most ${limit} tasks may be working or waiting for input at once. ` +
    'Wait for a task to finish, or cancel one, then try again.',
  data: { limit },
});

describe('ttl and expiry', () => {
  const redis = useRedis();

  /** Waits until Redis has dropped the task's hash (EXISTS also expires a due key lazily). */
  const gone = async (store: TaskStore, taskId: string) => {
    const conn = redis.connect();
    await waitFor(async () => (await conn.exists(store.keys.task(taskId))) === 0, `task ${taskId} to expire`);
  };

  it('[TTL-2] the task hash expires at exactly createdAt + ttl, the owner index no earlier', async () => {
    const store = makeStore(redis, { minTtlMs: 50 });
    const conn = redis.connect();
    const short = await store.create({ owner: 'alice', requestedTtlMs: 5_000 });
    const long = await store.create({ owner: 'alice', requestedTtlMs: 60_000 });
    expect(short.ttl).toBe(5_000);
    for (const task of [short, long]) {
      expect(await conn.call('PEXPIRETIME', store.keys.task(task.taskId))).toBe(task.createdAt + task.ttl);
      // createdAt is the Redis clock as the process follows it (RedisClock): within a round trip of TIME.
      const pttl = await conn.pttl(store.keys.task(task.taskId));
      expect(pttl).toBeGreaterThan(task.ttl - 1_000);
      expect(pttl).toBeLessThanOrEqual(task.ttl + 100);
    }
    const ownerId = Keys.ownerId('alice');
    // An index's expiry moves in steps of a minute past its longest-lived task's.
    for (const index of [store.keys.ownerTasks(ownerId), store.keys.ownerActive(ownerId)]) {
      const expiry = Number(await conn.call('PEXPIRETIME', index));
      expect(expiry).toBeGreaterThanOrEqual(long.createdAt + long.ttl);
      expect(expiry).toBeLessThanOrEqual(long.createdAt + long.ttl + 60_000);
    }
    expect(Number(await conn.zscore(store.keys.ownerTasks(ownerId), short.taskId))).toBe(short.createdAt + short.ttl);
  });

  it('[TTL-2][ERR-1] an expired task answers -32602: "has expired" while indexed, "not found" once pruned', async () => {
    const store = makeStore(redis, { minTtlMs: 50 });
    const task = await store.create({ owner: 'bob', requestedTtlMs: 150 });
    // A longer-lived sibling keeps the owner's index alive past the short task's expiry.
    const sibling = await store.create({ owner: 'bob' });
    expect((await store.get('bob', task.taskId)).status).toBe('working');
    await gone(store, task.taskId);
    expect(await rejection(store.get('bob', task.taskId))).toEqual(EXPIRED);
    expect(await rejection(store.cancel('bob', task.taskId))).toEqual(EXPIRED);
    expect(await rejection(store.outcome('bob', task.taskId))).toEqual(EXPIRED);
    // Another owner learns nothing: for it the id is simply unknown.
    expect(await rejection(store.get('eve', task.taskId))).toEqual(NOT_FOUND);
    // Transitions from workers see it gone.
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    expect(await store.start(ref, 1)).toEqual({ ok: false, reason: 'not_found' });
    expect(await store.finish(ref, { result: {} })).toEqual({ ok: false, reason: 'not_found' });
    // Listing prunes the index entry; from then on the id is unknown.
    expect((await store.list('bob')).tasks.map((t) => t.taskId)).toEqual([sibling.taskId]);
    expect(await rejection(store.get('bob', task.taskId))).toEqual(NOT_FOUND);
    expect(await rejection(store.cancel('bob', task.taskId))).toEqual(NOT_FOUND);
  });

  it('[TTL-2] a lone expired task takes its owner index with it and answers not found', async () => {
    const store = makeStore(redis, { minTtlMs: 50 });
    const conn = redis.connect();
    const task = await store.create({ owner: 'carl', requestedTtlMs: 100 });
    await store.finish({ taskId: task.taskId, ownerId: task.ownerId }, { result: { content: [] } });
    await gone(store, task.taskId);
    // The index outlives its last task by one step of its expiry at most (the ttl, here).
    await waitFor(async () => (await conn.exists(store.keys.ownerTasks(task.ownerId))) === 0, 'the index to expire');
    expect(await conn.exists(store.keys.ownerActive(task.ownerId))).toBe(0);
    expect(await rejection(store.get('carl', task.taskId))).toEqual(NOT_FOUND);
    expect(await rejection(store.outcome('carl', task.taskId))).toEqual(NOT_FOUND);
    expect(await store.list('carl')).toEqual({ tasks: [] });
  });

  it('[TTL-1][GET-3] the granted ttl is clamped to [min, max], defaulted when absent, and reported everywhere', async () => {
    const store = makeStore(redis, { minTtlMs: 500, maxTtlMs: 10_000, defaultTtlMs: 2_000 });
    const conn = redis.connect();
    const cases: [number | undefined, number][] = [
      [999_999, 10_000],
      [10_001, 10_000],
      [10_000, 10_000],
      [5_000, 5_000],
      [1_234.9, 1_234],
      [500, 500],
      [499, 500],
      [1, 500],
      [0, 500],
      [-5, 500],
      [undefined, 2_000],
      [Number.NaN, 2_000],
      [Number.POSITIVE_INFINITY, 2_000],
    ];
    for (const [requested, granted] of cases) {
      const created = await store.create({
        owner: 'dora',
        ...(requested !== undefined && { requestedTtlMs: requested }),
      });
      expect(created.ttl, `requested ${requested}`).toBe(granted);
      expect(created.status).toBe('working');
      expect(await conn.call('PEXPIRETIME', store.keys.task(created.taskId))).toBe(created.createdAt + granted);
      expect((await store.get('dora', created.taskId)).ttl).toBe(granted);
      const listed = (await store.list('dora')).tasks.find((t) => t.taskId === created.taskId);
      expect(listed?.ttl).toBe(granted);
      expect((await store.cancel('dora', created.taskId)).ttl).toBe(granted);
    }
  });

  it('[TTL-1] grantTtl and resolveTaskLimits', () => {
    const limits = resolveTaskLimits({ minTtlMs: 10, maxTtlMs: 100, defaultTtlMs: 50 });
    expect([grantTtl(limits, undefined), grantTtl(limits, 5), grantTtl(limits, 70), grantTtl(limits, 1e12)]).toEqual([
      50, 10, 70, 100,
    ]);
    expect(resolveTaskLimits()).toEqual(DEFAULT_TASK_LIMITS);
    expect(() => resolveTaskLimits({ minTtlMs: 200, maxTtlMs: 100 })).toThrow('minTtlMs (200) exceeds maxTtlMs (100)');
    expect(() => resolveTaskLimits({ pageSize: 0 })).toThrow('pageSize must be a positive integer, got 0');
    expect(() => resolveTaskLimits({ maxActivePerOwner: -1 })).toThrow('maxActivePerOwner must be a non-negative');
    expect(() => resolveTaskLimits({ pageSize: 1001 })).toThrow('pageSize must be at most 1000');
  });
});

describe('per-owner concurrency limit', () => {
  const redis = useRedis();

  it('[TTL-3] the N+1-th active task is refused with -32010; finishing or cancelling frees a slot', async () => {
    const store = makeStore(redis, { maxActivePerOwner: 3 });
    const tasks: StoredTask[] = [];
    for (let i = 0; i < 3; i++) tasks.push(await store.create({ owner: 'alice' }));
    expect(await rejection(store.create({ owner: 'alice' }))).toEqual(limitError(3));
    // Waiting for input still counts as active.
    const ref = (i: number) => ({ taskId: tasks[i]!.taskId, ownerId: tasks[i]!.ownerId });
    expect((await store.requireInput(ref(0))).ok).toBe(true);
    expect(await rejection(store.create({ owner: 'alice' }))).toEqual(limitError(3));
    // Another owner is unaffected.
    expect((await store.create({ owner: 'bob' })).status).toBe('working');

    expect((await store.finish(ref(0), { result: { content: [] } })).ok).toBe(true);
    tasks.push(await store.create({ owner: 'alice' }));
    expect(await rejection(store.create({ owner: 'alice' }))).toEqual(limitError(3));

    await store.cancel('alice', tasks[1]!.taskId);
    tasks.push(await store.create({ owner: 'alice' }));
    expect(await rejection(store.create({ owner: 'alice' }))).toEqual(limitError(3));

    expect((await store.finish(ref(2), { error: { code: -32603, message: 'boom' } })).ok).toBe(true);
    tasks.push(await store.create({ owner: 'alice' }));
    expect((await store.cancelAsBroker(ref(3), 'job lost')).ok).toBe(true);
    tasks.push(await store.create({ owner: 'alice' }));
    expect(await rejection(store.create({ owner: 'alice' }))).toEqual(limitError(3));
    // Refused creates leave nothing behind: 3 active, 7 tasks made in all.
    const conn = redis.connect();
    expect(await conn.zcard(store.keys.ownerActive(Keys.ownerId('alice')))).toBe(3);
    expect(await conn.zcard(store.keys.ownerTasks(Keys.ownerId('alice')))).toBe(tasks.length);
    expect(tasks).toHaveLength(7);
    // No record either: alice's 7 tasks and bob's one are the only task hashes.
    expect(await conn.keys(store.keys.taskPattern())).toHaveLength(tasks.length + 1);
  });

  it('[TTL-3] the limit holds under concurrent creates from several connections', async () => {
    const stores = [0, 1, 2].map(() => makeStore(redis, { maxActivePerOwner: 4 }));
    const results = await Promise.allSettled(
      Array.from({ length: 30 }, (_v, i) => stores[i % 3]!.create({ owner: 'carol' })),
    );
    const created = results.filter((r) => r.status === 'fulfilled');
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
    expect(created).toHaveLength(4);
    expect(refused).toHaveLength(26);
    for (const r of refused) expect(r.reason).toMatchObject({ code: -32010, data: { limit: 4 } });
  });

  it('[TTL-3] expired non-terminal tasks free their slots', async () => {
    const store = makeStore(redis, { maxActivePerOwner: 2, minTtlMs: 50 });
    const conn = redis.connect();
    const short = [
      await store.create({ owner: 'dan', requestedTtlMs: 150 }),
      await store.create({ owner: 'dan', requestedTtlMs: 150 }),
    ];
    expect(await rejection(store.create({ owner: 'dan' }))).toEqual(limitError(2));
    for (const t of short) await waitFor(async () => (await conn.exists(store.keys.task(t.taskId))) === 0, 'expiry');
    const fresh = await store.create({ owner: 'dan' });
    expect(fresh.status).toBe('working');
    expect(await conn.zrange(store.keys.ownerActive(Keys.ownerId('dan')), 0, -1)).toEqual([fresh.taskId]);
  });

  it('[TTL-3] maxActivePerOwner = 0 means unlimited', async () => {
    const store = makeStore(redis, { maxActivePerOwner: 0 });
    const created = await Promise.all(Array.from({ length: 150 }, () => store.create({ owner: 'erin' })));
    expect(new Set(created.map((t) => t.taskId)).size).toBe(150);
  });
});
