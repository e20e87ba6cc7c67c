import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { announcedEntry, Keys, newSessionId, SessionFeed, SessionStore, TaskStore } from '../src/index.js';
import { Scripts } from '../src/redis/script-replies.js';

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

describe('TaskStore records', () => {
  const redis = useRedis();
  const store = () =>
    new TaskStore({ redis: redis.connect(), keys: new Keys(redis.prefix), cursorSecret: 'x'.repeat(32) });

  it('[ERR-4] a JSON-RPC error or an isError result fails the task; the exact outcome is stored', async () => {
    const s = store();
    const error = { error: { code: -32603, message: 'Upstream API timed out', data: { after: 30 } } };
    const isError = { result: { content: [{ type: 'text', text: 'bad input' }], isError: true } };
    const ok = { result: { content: [{ type: 'text', text: 'fine' }], structuredContent: { n: 1 } } };
    const cases = [
      [error, 'failed', 'Upstream API timed out'],
      [isError, 'failed', 'bad input'],
      [ok, 'completed', undefined],
    ] as const;
    for (const [outcome, status, statusMessage] of cases) {
      const task = await s.create({ owner: 'alice' });
      const done = await s.finish({ taskId: task.taskId, ownerId: task.ownerId }, outcome);
      expect(done.ok && done.task.status).toBe(status);
      const stored = await s.outcome('alice', task.taskId);
      expect(stored.outcome).toEqual(outcome);
      expect(stored.task.statusMessage).toBe(statusMessage);
      expect((await s.get('alice', task.taskId)).status).toBe(status);
    }
    // An explicit diagnostic wins over the error's own message.
    const task = await s.create({ owner: 'alice' });
    await s.finish({ taskId: task.taskId, ownerId: task.ownerId }, isError, 'The tool reported an error');
    expect((await s.get('alice', task.taskId)).statusMessage).toBe('The tool reported an error');
  });

  it('keeps broker-side fields (tool, kind, progress token, attempt) out of the wire Task', async () => {
    const s = store();
    for (const progressToken of [7, 'tok-1']) {
      const created = await s.create({ owner: 'alice', tool: 'resize', progressToken, kind: 'direct' });
      await s.start({ taskId: created.taskId, ownerId: created.ownerId }, 3);
      const stored = await s.getOwned('alice', created.taskId);
      expect(stored).toMatchObject({ tool: 'resize', progressToken, kind: 'direct', attempt: 3, version: 1 });
      expect(stored.ownerId).toBe(Keys.ownerId('alice'));
      expect(Object.keys(await s.get('alice', created.taskId)).sort()).toEqual(
        ['createdAt', 'lastUpdatedAt', 'pollInterval', 'status', 'taskId', 'ttl'].sort(),
      );
    }
  });

  it("publishes every visible change once on the task channel and once on its session's channel, never the raw session id", async () => {
    const s = store();
    const conn = redis.connect();
    const subscriber = redis.connect();
    // A session of alice's (its id carries her slot tag) whose GET stream is open: that makes its feed.
    const sessions = new SessionStore({ redis: conn, keys: s.keys, idleTtlMs: 60_000 });
    const { sessionId: session } = await sessions.create({
      principal: 'alice',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    expect(await sessions.claimStream(session, 'stream-1', 10_000)).toBe('ok');
    const seen: [string, string][] = [];
    subscriber.on('pmessage', (_p: string, channel: string, message: string) => seen.push([channel, message]));
    await subscriber.psubscribe(`${redis.prefix}:*`);
    const task = await s.create({ owner: 'alice', session });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    await s.start(ref, 1);
    await s.requireInput(ref, 'need input');
    await s.cancel('alice', task.taskId);
    const sync = `${redis.prefix}:sync`;
    await conn.publish(sync, 'end');
    await expect.poll(() => seen.at(-1)?.[0]).toBe(sync);
    const messages = (channel: string) => seen.filter(([c]) => c === channel).map(([, m]) => m);
    // Creation (version 1) is not published: its creator has it in the answer. A start of the working task
    // (a new attempt) changes nothing a client sees and is not published either.
    expect(messages(s.keys.taskChannel(task.taskId)).map((m) => JSON.parse(m).version)).toEqual(['2', '3']);
    // Two changes on both channels, the workers' cancellation channel, and the sync message.
    expect(messages(s.keys.cancelledChannel())).toEqual([task.taskId]);
    expect(seen).toHaveLength(6);
    const everything = JSON.stringify([seen, await conn.keys('*'), await conn.hgetall(s.keys.task(task.taskId))]);
    expect(everything).not.toContain(session);
    // The feed has both changes after the marker its GET stream's lease made; the session's channel announces
    // each entry with the one before it, so a stream standing there needs no read of the feed.
    const feed = await conn.xrange(s.keys.sessionFeed(session), '-', '+');
    expect(feed.map(([, fields]) => fields[0])).toEqual(['m', 's', 's']);
    const [marker, first, second] = feed.map(([id]) => id);
    const announced = messages(s.keys.sessionChannel(session)).map(announcedEntry);
    expect(announced.map((a) => [a?.entry.id, a?.after])).toEqual([
      [first, marker],
      [second, first],
    ]);
    expect(announced.map((a) => a?.entry.kind === 'status' && JSON.parse(a.entry.snapshot).version)).toEqual([
      '2',
      '3',
    ]);
    const read = await new SessionFeed({ redis: conn, keys: s.keys }).readAfter(session, marker ?? '');
    expect(announced.map((a) => a?.entry)).toEqual(read);
  });

  it('reads no announcement from other messages of a session channel', () => {
    for (const message of [
      'ended',
      'resumed',
      'feed',
      'feed 1-0',
      'feed 1-0 0-0',
      'feed 1-0 0-0 s',
      'feed 1-0 0-0 x v',
    ]) {
      expect(announcedEntry(message)).toBeUndefined();
    }
    expect(announcedEntry('feed 2-0 1-0 o task 1')).toEqual({
      entry: { id: '2-0', kind: 'outbox', taskId: 'task 1' },
      after: '1-0',
    });
    expect(announcedEntry('feed 2-0 0-0 s {"a": 1}')).toEqual({
      entry: { id: '2-0', kind: 'status', snapshot: '{"a": 1}' },
      after: '0-0',
    });
  });

  it('still runs the transitions of a record an earlier version wrote (feed, notify, expiresAt and kind stored)', async () => {
    const s = store();
    const conn = redis.connect();
    const sessions = new SessionStore({ redis: conn, keys: s.keys, idleTtlMs: 60_000 });
    const { sessionId: session } = await sessions.create({
      principal: 'dave',
      protocolVersion: '2025-11-25',
      clientCapabilities: {},
    });
    expect(await sessions.claimStream(session, 'stream-1', 10_000)).toBe('ok');
    const task = await s.create({ owner: 'dave', session, tool: 'echo' });
    const key = s.keys.task(task.taskId);
    const expiresAt = task.createdAt + task.ttl;
    // The fields the earlier layout stored besides today's.
    await conn.hset(key, {
      kind: 'task',
      expiresAt: String(expiresAt),
      feed: s.keys.sessionFeed(session),
      notify: s.keys.sessionChannel(session),
    });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    const done = await s.finish(ref, { result: { content: [] } });
    expect(done.ok && done.task).toMatchObject({ status: 'completed', kind: 'task', session: Keys.digest(session) });
    const feed = await conn.xrange(s.keys.sessionFeed(session), '-', '+');
    expect(feed.map(([, fields]) => fields[0])).toEqual(['m', 's']);
    expect(await conn.pexpiretime(s.keys.sessionFeed(session))).toBeGreaterThanOrEqual(expiresAt);
    expect(await s.outcome('dave', task.taskId)).toMatchObject({ outcome: { result: { content: [] } } });
  });

  it("writes each execution's start before its tool runs, with the clock the process follows; once per call", async () => {
    const s = store();
    const conn = redis.connect();
    const started: [number, number | undefined][] = [];
    const observed = new TaskStore({
      redis: redis.connect(),
      keys: s.keys,
      cursorSecret: 'x'.repeat(32),
      observer: { started: (task, attempt) => started.push([attempt, task.startedAt]) },
    });
    const task = await observed.create({ owner: 'erin', tool: 'echo' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    expect((await observed.start(ref, 1)).ok).toBe(true);
    const startedAt = (await observed.read(task.taskId))?.startedAt as number;
    expect(startedAt).toBeGreaterThanOrEqual(task.createdAt);
    expect(started).toEqual([[1, startedAt]]);
    // A first attempt's number is implied by its start, and a working task's start publishes nothing.
    const raw = await conn.hgetall(s.keys.task(task.taskId));
    expect(raw).toMatchObject({ status: 'working', startedAt: String(startedAt), version: '1' });
    expect(raw.attempt).toBeUndefined();
    expect(await observed.read(task.taskId)).toMatchObject({ attempt: 1, startedAt });

    // The same start sent again (its reply lost, ioredis resends it) is not a second execution.
    const scripts = new Scripts(conn);
    const keys = [
      s.keys.task(task.taskId),
      s.keys.taskChannel(task.taskId),
      s.keys.task(task.taskId),
      s.keys.task(task.taskId),
    ];
    const again = await scripts.transition('startTask', keys, [task.taskId, 1, '', startedAt]);
    expect(again.kind).toBe('changed');
    expect(await conn.hgetall(s.keys.task(task.taskId))).toEqual(raw);
    // A second execution records its number; its start is never before the first one's.
    await observed.start(ref, 2);
    expect(await observed.read(task.taskId)).toMatchObject({ attempt: 2, startedAt: expect.any(Number) });
    expect((await observed.read(task.taskId))?.startedAt).toBeGreaterThanOrEqual(startedAt);

    const done = await observed.finish(ref, { result: { content: [] } });
    expect(done.ok && done.task.lastUpdatedAt).toBeGreaterThanOrEqual(startedAt);
    await observed.create({ owner: 'erin', tool: 'echo' }).then(async (other) => {
      await observed.cancel('erin', other.taskId);
      expect(await observed.start({ taskId: other.taskId, ownerId: other.ownerId }, 1)).toEqual({
        ok: false,
        reason: 'terminal',
        status: 'cancelled',
      });
    });
    expect(started).toHaveLength(2);
  });

  it("stamps creation, start and finish with the clock it follows; with clock 'server', with TIME in each script", async () => {
    const conn = redis.connect();
    const timeCalls = async (): Promise<number> => {
      const info = await conn.info('commandstats');
      return Number(/cmdstat_time:calls=(\d+)/.exec(info)?.[1] ?? 0);
    };
    const run = async (s: TaskStore): Promise<number> => {
      const task = await s.create({ owner: 'frank', tool: 'echo' });
      const ref = { taskId: task.taskId, ownerId: task.ownerId };
      const before = await timeCalls();
      expect((await s.start(ref, 1)).ok).toBe(true);
      const done = await s.finish(ref, { result: { content: [] } });
      expect(done.ok && done.task.status).toBe('completed');
      const record = await s.read(task.taskId);
      expect(record?.lastUpdatedAt).toBeGreaterThanOrEqual(record?.startedAt as number);
      return (await timeCalls()) - before;
    };
    const keys = new Keys(redis.prefix);
    const followed = new TaskStore({ redis: redis.connect(), keys, cursorSecret: 'x'.repeat(32) });
    // Its first creation synchronised the clock it follows: neither the start nor the finish reads TIME.
    expect(await run(followed)).toBe(0);
    const server = new TaskStore({ redis: redis.connect(), keys, cursorSecret: 'x'.repeat(32), clock: 'server' });
    expect(await run(server)).toBe(2);
  });

  it('moves a task waiting for input back to working on a start of the same millisecond as the last one', async () => {
    const s = store();
    const conn = redis.connect();
    const task = await s.create({ owner: 'erin', tool: 'echo' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    const scripts = new Scripts(conn);
    const keys = [
      s.keys.task(task.taskId),
      s.keys.taskChannel(task.taskId),
      s.keys.task(task.taskId),
      s.keys.task(task.taskId),
    ];
    // Two starts stamped with the same time by the clocks their processes follow (ahead of TIME here), the
    // tool's request for input between them: the second is not the first one sent again.
    const at = Date.now() + 60_000;
    expect((await scripts.transition('startTask', keys, [task.taskId, 1, '', at])).kind).toBe('changed');
    expect(await s.requireInput(ref, 'which one?')).toMatchObject({ ok: true, task: { status: 'input_required' } });
    const second = await scripts.transition('startTask', keys, [task.taskId, 1, '', at]);
    expect(second.kind).toBe('changed');
    expect(await s.read(task.taskId)).toMatchObject({ status: 'working', version: 3, startedAt: at });
  });

  it('keeps no feed and publishes nothing on the channel of a session that never opened its GET stream', async () => {
    const s = store();
    const conn = redis.connect();
    const subscriber = redis.connect();
    const session = newSessionId('carol');
    const seen: string[] = [];
    subscriber.on('pmessage', (_p: string, channel: string) => seen.push(channel));
    await subscriber.psubscribe(`${redis.prefix}:*`);
    const task = await s.create({ owner: 'carol', session });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    await s.requireInput(ref, 'need input');
    await s.finish(ref, { result: { content: [] } });
    const sync = `${redis.prefix}:sync`;
    await conn.publish(sync, 'end');
    await expect.poll(() => seen.at(-1)).toBe(sync);
    expect(seen).toEqual([s.keys.taskChannel(task.taskId), s.keys.taskChannel(task.taskId), sync]);
    expect(await conn.exists(s.keys.sessionFeed(session))).toBe(0);
    // The record names its session by digest only; the feed and channel are derived from it.
    expect(await conn.hmget(s.keys.task(task.taskId), 'session', 'feed', 'notify', 'expiresAt', 'kind')).toEqual([
      Keys.digest(session),
      null,
      null,
      null,
      null,
    ]);
  });
});
