import { execFileSync } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RedisServer, startRedis, useRedis } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { Keys, ListCursorCodec, TaskStore } from '../src/index.js';
import { byteOrder, CURSOR_SECRET, makeStore, rejection, sleep, waitFor } from './support.js';

const invalid = (reason: string) => ({
  name: 'ProtocolError',
  code: -32602,
  message: `Invalid cursor: ${reason}. Call tasks/list without a cursor to start over.`,
});

/** Twelve shape-valid ids whose byte order differs from a natural-language collation (case, '-', '_'). */
const TIE_IDS = [
  'aaaaaaaaaaaaaaaaaaaaaaaa',
  'Baaaaaaaaaaaaaaaaaaaaaaa',
  'a-aaaaaaaaaaaaaaaaaaaaab',
  '_aaaaaaaaaaaaaaaaaaaaaaa',
  'Zaaaaaaaaaaaaaaaaaaaaaaa',
  'zaaaaaaaaaaaaaaaaaaaaaaa',
  '0aaaaaaaaaaaaaaaaaaaaaaa',
  '-aaaaaaaaaaaaaaaaaaaaaaa',
  'AAAAAAAAAAAAAAAAAAAAAAAA',
  'abaaaaaaaaaaaaaaaaaaaaaa',
  'a_aaaaaaaaaaaaaaaaaaaaaa',
  'bAaaaaaaaaaaaaaaaaaaaaaa',
];

/**
 * Gives `owner` one task per TIE_IDS entry, all with the same index score, so that the listing order among
 * them is decided by the ids alone (Redis: byte order).
 */
async function tiedTasks(store: TaskStore, conn: Redis, owner: string): Promise<void> {
  const index = store.keys.ownerTasks(Keys.ownerId(owner));
  const score = Date.now() + 3_600_000;
  for (const id of TIE_IDS) {
    const { taskId } = await store.create({ owner });
    await conn.rename(store.keys.task(taskId), store.keys.task(id));
    await conn.zrem(index, taskId);
    await conn.zadd(index, score, id);
  }
}

/**
 * Lists `owner`'s tasks page by page and, between pages, deletes the last task of the page just read (hash and
 * index entry, as an eviction or a deletion would), so every continuation starts from a vanished position.
 */
async function listRemovingLast(store: TaskStore, conn: Redis, owner: string) {
  const index = store.keys.ownerTasks(Keys.ownerId(owner));
  const listed: string[] = [];
  const removed: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await store.list(owner, cursor);
    expect(page.tasks.length).toBeLessThanOrEqual(store.limits.pageSize);
    listed.push(...page.tasks.map((t) => t.taskId));
    cursor = page.nextCursor;
    const last = page.tasks.at(-1)?.taskId;
    if (cursor !== undefined && last !== undefined) {
      await conn.del(store.keys.task(last));
      await conn.zrem(index, last);
      removed.push(last);
    }
  } while (cursor !== undefined && listed.length < 100);
  return { listed, removed };
}

/** A compiled en_US.UTF-8 locale (built once per machine into the temp dir), or undefined when none can be. */
function collatingLocale(): string | undefined {
  const dir = join(tmpdir(), 'taskgate-test-locales');
  if (!existsSync(join(dir, 'en_US.UTF-8'))) {
    try {
      mkdirSync(dir, { recursive: true });
      execFileSync('localedef', ['-i', 'en_US', '-f', 'UTF-8', join(dir, 'en_US.UTF-8')], { stdio: 'ignore' });
    } catch {
      // localedef exits non-zero on warnings yet often writes a usable locale; checked below.
    }
  }
  return existsSync(join(dir, 'en_US.UTF-8', 'LC_COLLATE')) ? dir : undefined;
}

describe('tasks/list cursors', () => {
  const redis = useRedis();

  it('[LST-3][SEC-1] a cursor issued to one owner is refused for another', async () => {
    const store = makeStore(redis, { pageSize: 2 });
    for (let i = 0; i < 3; i++) {
      await store.create({ owner: 'alice' });
      await store.create({ owner: 'bob' });
    }
    const { nextCursor } = await store.list('alice');
    expect(nextCursor).toEqual(expect.any(String));
    expect(await rejection(store.list('bob', nextCursor))).toEqual(
      invalid('it is not a cursor this server issued to you'),
    );
    // Still valid for its owner, and reusable: the same continuation twice.
    const again = await store.list('alice', nextCursor);
    expect(again.tasks).toHaveLength(1);
    expect(await store.list('alice', nextCursor)).toEqual(again);
  });

  it('[LST-3][ERR-1] tampered, garbage and foreign-secret cursors answer -32602 Invalid cursor', async () => {
    const store = makeStore(redis, { pageSize: 1 });
    await store.create({ owner: 'alice' });
    await store.create({ owner: 'alice' });
    const cursor = (await store.list('alice')).nextCursor!;
    const [payload, mac] = cursor.split('.') as [string, string];
    const fields = JSON.parse(Buffer.from(payload, 'base64url').toString()) as [number, string, number];
    const forgedPayload = Buffer.from(JSON.stringify([0, fields[1], fields[2]])).toString('base64url');
    const flippedMac = `${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    const otherSecret = new TaskStore({
      redis: redis.connect(),
      keys: new Keys(redis.prefix),
      cursorSecret: 'another-secret-of-enough-length',
    });
    const cases: [string, string][] = [
      [`${forgedPayload}.${mac}`, 'it is not a cursor this server issued to you'],
      [`${payload}.${flippedMac}`, 'it is not a cursor this server issued to you'],
      [`${payload}.`, 'it is not a cursor this server issued to you'],
      [`${cursor}.extra`, 'it is not a cursor this server issued'],
      ['garbage', 'it is not a cursor this server issued'],
      ['', 'it is not a cursor this server issued'],
      ['x'.repeat(600), 'it is not a cursor this server issued'],
      [`${'a'.repeat(300)}.${'b'.repeat(300)}`, 'it is not a cursor this server issued'],
    ];
    for (const [bad, reason] of cases) expect(await rejection(store.list('alice', bad))).toEqual(invalid(reason));
    expect(await rejection(otherSecret.list('alice', cursor))).toEqual(
      invalid('it is not a cursor this server issued to you'),
    );
    // Correctly signed (a leaked secret, say) but not a position: refused as malformed, never handed to Redis.
    const sign = (payload: string) =>
      `${payload}.${createHmac('sha256', CURSOR_SECRET)
        .update(`${Keys.ownerId('alice')}\n${payload}`)
        .digest('base64url')
        .slice(0, 22)}`;
    expect(sign(payload)).toBe(cursor);
    for (const body of ['{not json', '{"a":1}', '[1,2]', '["1","x",2]', '[1,2,3]']) {
      expect(await rejection(store.list('alice', sign(Buffer.from(body).toString('base64url'))))).toEqual(
        invalid('it is malformed'),
      );
    }
  });

  it('[LST-3] the codec honours its maximum age exactly and binds the owner', () => {
    let now = 1_000;
    const codec = new ListCursorCodec(CURSOR_SECRET, 500, () => now);
    const cursor = codec.encode('owner-a', { score: 42, id: 'abc' });
    now = 1_500;
    expect(codec.decode('owner-a', cursor)).toEqual({ score: 42, id: 'abc' });
    expect(() => codec.decode('owner-b', cursor)).toThrow(
      invalid('it is not a cursor this server issued to you').message,
    );
    now = 1_501;
    expect(() => codec.decode('owner-a', cursor)).toThrow(invalid('it has expired').message);
    expect(() => new ListCursorCodec('too-short', 500)).toThrow('at least 16 bytes');
  });

  it('[LST-3] a cursor older than cursorTtlMs is refused as expired', async () => {
    const store = makeStore(redis, { pageSize: 1, cursorTtlMs: 250 });
    await store.create({ owner: 'alice' });
    await store.create({ owner: 'alice' });
    const { nextCursor } = await store.list('alice');
    expect((await store.list('alice', nextCursor)).tasks).toHaveLength(1);
    await sleep(300);
    expect(await rejection(store.list('alice', nextCursor))).toEqual(invalid('it has expired'));
  });

  it('[LST-2][TTL-2] a listing continues when the last task of the previous page expired in between', async () => {
    const store = makeStore(redis, { pageSize: 3, minTtlMs: 50 });
    const keys = new Keys(redis.prefix);
    const conn = redis.connect();
    const short: string[] = [];
    for (let i = 0; i < 3; i++) short.push((await store.create({ owner: 'gina', requestedTtlMs: 120 })).taskId);
    const long: string[] = [];
    for (let i = 0; i < 5; i++) long.push((await store.create({ owner: 'gina' })).taskId);
    const first = await store.list('gina');
    expect(first.tasks.map((t) => t.taskId).sort()).toEqual([...short].sort());
    await waitFor(async () => (await conn.exists(...short.map((id) => keys.task(id)))) === 0, 'short tasks expire');
    const second = await store.list('gina', first.nextCursor);
    expect(second.tasks).toHaveLength(3);
    expect(second.nextCursor).toEqual(expect.any(String));
    const third = await store.list('gina', second.nextCursor);
    expect(third.tasks).toHaveLength(2);
    expect(third.nextCursor).toBeUndefined();
    expect([...second.tasks, ...third.tasks].map((t) => t.taskId).sort()).toEqual([...long].sort());
  });

  it('[LST-2] a listing continues exactly when the last task of each page is removed, among equal scores', async () => {
    const store = makeStore(redis, { pageSize: 3 });
    const conn = redis.connect();
    await tiedTasks(store, conn, 'hank');
    const { listed, removed } = await listRemovingLast(store, conn, 'hank');
    expect(removed.length).toBeGreaterThan(1);
    expect([...listed].sort(byteOrder)).toEqual(listed);
    expect(new Set(listed).size).toBe(listed.length);
    expect(listed).toEqual([...TIE_IDS].sort(byteOrder));
  });

  it('[LST-2] the continuation after a removed entry does not depend on the Redis server locale', async () => {
    const locales = collatingLocale();
    const saved = { LOCPATH: process.env.LOCPATH, LC_ALL: process.env.LC_ALL };
    let server: RedisServer | undefined;
    let conn: Redis | undefined;
    try {
      if (locales !== undefined) {
        process.env.LOCPATH = locales;
        process.env.LC_ALL = 'en_US.UTF-8';
      }
      server = await startRedis();
      for (const [name, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[name];
        else process.env[name] = value;
      }
      conn = new Redis({ port: server.port, host: server.host, maxRetriesPerRequest: null });
      // With the locale in place the server's Lua compares strings by collation, not by bytes.
      const luaSaysBBeforeA = await conn.eval("return tostring('B' < 'a')", 0);
      expect(luaSaysBBeforeA).toBe(locales === undefined ? 'true' : 'false');
      const store = new TaskStore({
        redis: conn,
        keys: new Keys(redis.prefix),
        cursorSecret: CURSOR_SECRET,
        limits: { pageSize: 3 },
      });
      await tiedTasks(store, conn, 'ivy');
      const { listed, removed } = await listRemovingLast(store, conn, 'ivy');
      expect(removed.length).toBeGreaterThan(1);
      expect(listed).toEqual([...TIE_IDS].sort(byteOrder));
    } finally {
      await conn?.quit().catch(() => conn?.disconnect());
      await server?.stop();
    }
  });
});
