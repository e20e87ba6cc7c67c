import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys, type TaskStore } from '../src/index.js';
import { makeStore, NOT_FOUND, rejection, waitFor } from './support.js';

/** Every page of `owner`'s listing, following nextCursor to the end. */
async function allPages(store: TaskStore, owner: string): Promise<{ ids: string[]; cursor?: string }[]> {
  const pages: { ids: string[]; cursor?: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(owner, cursor);
    pages.push({
      ids: page.tasks.map((t) => t.taskId),
      ...(page.nextCursor !== undefined && { cursor: page.nextCursor }),
    });
    cursor = page.nextCursor;
    if (pages.length > 10_000) throw new Error('the listing does not end');
  } while (cursor !== undefined);
  return pages;
}

describe('tasks/list', () => {
  const redis = useRedis();

  it('[LST-2][LST-4][SEC-1] lists 10,000 own tasks exactly once in bounded pages beside 1,000 foreign ones', async () => {
    const pageSize = 97;
    const store = makeStore(redis, { maxActivePerOwner: 0, pageSize }, redis.connect({ enableAutoPipelining: true }));
    const [alice, bob] = await Promise.all([
      Promise.all(Array.from({ length: 10_000 }, () => store.create({ owner: 'alice', tool: 't' }))),
      Promise.all(Array.from({ length: 1_000 }, () => store.create({ owner: 'bob', tool: 't' }))),
    ]);
    const aliceIds = new Set(alice.map((t) => t.taskId));
    const bobIds = new Set(bob.map((t) => t.taskId));
    expect(aliceIds.size).toBe(10_000);
    expect(bobIds.size).toBe(1_000);
    // Some tasks move on: finished and cancelled tasks stay listed until they expire.
    const ref = (taskId: string) => ({ taskId, ownerId: Keys.ownerId('alice') });
    await store.finish(ref(alice[0]!.taskId), { result: { content: [] } });
    await store.cancel('alice', alice[1]!.taskId);
    await store.requireInput(ref(alice[2]!.taskId));

    for (const [owner, own, foreign] of [
      ['alice', aliceIds, bobIds],
      ['bob', bobIds, aliceIds],
    ] as const) {
      const pages = await allPages(store, owner);
      const listed = new Map<string, number>();
      pages.forEach((page, i) => {
        expect(page.ids.length).toBeLessThanOrEqual(pageSize);
        expect(new Set(page.ids).size).toBe(page.ids.length);
        const isLast = i === pages.length - 1;
        // nextCursor while more remain, none at the end; with nothing removed every page but the last is full.
        expect(page.cursor === undefined).toBe(isLast);
        if (!isLast) expect(page.ids.length).toBe(pageSize);
        for (const id of page.ids) {
          expect(foreign.has(id)).toBe(false);
          listed.set(id, (listed.get(id) ?? 0) + 1);
        }
      });
      expect(pages.length).toBe(Math.ceil(own.size / pageSize));
      expect(listed.size).toBe(own.size);
      expect([...listed.values()].every((n) => n === 1)).toBe(true);
      expect([...own].every((id) => listed.has(id))).toBe(true);
    }

    // LST-4: whatever get returns is in the listing; another owner's ids are not retrievable at all.
    const listed = new Set((await allPages(store, 'alice')).flatMap((p) => p.ids));
    const got = await Promise.all([...aliceIds].map((id) => store.get('alice', id)));
    expect(got.map((t) => t.taskId).filter((id) => !listed.has(id))).toEqual([]);
    expect(got.filter((t) => t.status !== 'working').map((t) => t.status)).toEqual([
      'completed',
      'cancelled',
      'input_required',
    ]);
    for (const id of [...bobIds].slice(0, 50)) expect(await rejection(store.get('alice', id))).toEqual(NOT_FOUND);
  }, 60_000);

  it('[LST-1] an owner with no tasks gets an empty page without a cursor', async () => {
    const store = makeStore(redis);
    await store.create({ owner: 'someone-else' });
    expect(await store.list('nobody')).toEqual({ tasks: [] });
  });

  it('[LST-2] a full last page carries no cursor; pages hold the same Task shape as get', async () => {
    const store = makeStore(redis, { pageSize: 4 });
    const created = [];
    for (let i = 0; i < 8; i++) created.push(await store.create({ owner: 'carol' }));
    const first = await store.list('carol');
    expect(first.tasks).toHaveLength(4);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = await store.list('carol', first.nextCursor);
    expect(second.tasks).toHaveLength(4);
    expect(second.nextCursor).toBeUndefined();
    const byId = new Map([...first.tasks, ...second.tasks].map((t) => [t.taskId, t]));
    for (const task of created) expect(byId.get(task.taskId)).toEqual(await store.get('carol', task.taskId));
  });

  it('[TTL-2] expired tasks are pruned from the listing and from the index', async () => {
    const store = makeStore(redis, { minTtlMs: 50 });
    const keys = new Keys(redis.prefix);
    const conn = redis.connect();
    const short = await Promise.all(
      Array.from({ length: 5 }, () => store.create({ owner: 'dave', requestedTtlMs: 150 })),
    );
    const long = await Promise.all(Array.from({ length: 5 }, () => store.create({ owner: 'dave' })));
    expect((await store.list('dave')).tasks.map((t) => t.taskId).sort()).toEqual(
      [...short, ...long].map((t) => t.taskId).sort(),
    );
    await waitFor(
      async () => (await conn.exists(...short.map((t) => keys.task(t.taskId)))) === 0,
      'short tasks expire',
    );
    const page = await store.list('dave');
    expect(page.tasks.map((t) => t.taskId).sort()).toEqual(long.map((t) => t.taskId).sort());
    expect(page.nextCursor).toBeUndefined();
    const indexed = await conn.zrange(keys.ownerTasks(Keys.ownerId('dave')), 0, -1);
    expect(indexed.sort()).toEqual(long.map((t) => t.taskId).sort());
  });

  it('[TTL-2] a task whose hash vanished before its index entry is skipped and its entry dropped', async () => {
    const store = makeStore(redis, { pageSize: 3 });
    const keys = new Keys(redis.prefix);
    const conn = redis.connect();
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) ids.push((await store.create({ owner: 'erin' })).taskId);
    // The hash goes (evicted, deleted), its index entry stays behind.
    await conn.del(keys.task(ids[1]!));
    const pages = await allPages(store, 'erin');
    const listed = pages.flatMap((p) => p.ids);
    expect(listed.sort()).toEqual(ids.filter((id) => id !== ids[1]).sort());
    expect(await conn.zscore(keys.ownerTasks(Keys.ownerId('erin')), ids[1]!)).toBeNull();
  });

  it('direct calls (hidden records) are kept out of the listing', async () => {
    const store = makeStore(redis);
    const listedTask = await store.create({ owner: 'frank' });
    await store.create({ owner: 'frank', kind: 'direct' });
    expect((await store.list('frank')).tasks.map((t) => t.taskId)).toEqual([listedTask.taskId]);
  });
});
