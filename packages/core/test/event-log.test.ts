import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { EventLog, Keys, newSessionId, SessionFeed, SessionStore, TaskDelivery, TaskOutbox } from '../src/index.js';
import { Scripts } from '../src/redis/script-replies.js';
import { makeStore } from './support.js';

/** The session the streams of these tests belong to (its id gives them their slot tag). */
const SESSION = newSessionId();

describe('SSE event logs, task delivery and session feeds', () => {
  const redis = useRedis();

  function setup(maxEvents = 1000) {
    const conn = redis.connect();
    const keys = new Keys(redis.prefix);
    return {
      conn,
      keys,
      log: new EventLog({ redis: conn, keys, maxEvents, retentionMs: 60_000 }),
      delivery: new TaskDelivery({ redis: conn, keys }),
      outbox: new TaskOutbox({ redis: conn, keys }),
      feed: new SessionFeed({ redis: conn, keys }),
      store: makeStore(redis, {}, conn),
    };
  }

  it('ends a task stream in one step: its response logged with done, its connection and carrier leases given up', async () => {
    const { conn, keys, log, delivery } = setup();
    const taskId = `${SESSION.slice(0, 4)}${'t'.repeat(24)}`;
    // A stream that logged nothing before keeps its one event in its state: no log of its own.
    const quiet = EventLog.newStreamId(SESSION);
    await log.create({ streamId: quiet, kind: 'result', session: 'digest', taskId, rpcId: 7 }, 'conn-q', 10_000);
    expect(await delivery.claim(taskId, quiet, 'conn-q', 10_000)).toBe('ok');
    expect(await log.finish(quiet, 'conn-r', taskId, '{"r":1}', { done: '1' })).toBeUndefined();
    const entryId = (await log.finish(quiet, 'conn-q', taskId, '{"r":1}', { done: '1' })) as string;
    expect(entryId).toMatch(/^\d+-1$/);
    expect(await conn.exists(keys.sseStream(quiet), keys.sseConnection(quiet), keys.taskCarrier(taskId))).toBe(0);
    expect((await log.state(quiet))?.done).toBe(true);
    expect(await log.readAfter(quiet, '0-0')).toEqual([
      { id: EventLog.eventId(quiet, entryId), entryId, data: '{"r":1}' },
    ]);
    expect(await log.readAfter(quiet, entryId)).toEqual([]);
    expect(await log.complete(quiet, '0-0')).toBe(true);
    expect(await log.complete(quiet, entryId)).toBe(true);
    // A stream that logged events goes on in its log; another stream's carrier lease stays.
    const busy = EventLog.newStreamId(SESSION);
    await log.create({ streamId: busy, kind: 'result', session: 'digest', taskId, rpcId: 8 }, 'conn-b', 10_000);
    await log.append(busy, 'conn-b', '{"p":1}');
    await conn.set(keys.taskCarrier(taskId), 'another-stream');
    const last = (await log.finish(busy, 'conn-b', taskId, '{"r":2}', { done: '1' })) as string;
    expect(last).toMatch(/-2$/);
    expect(await conn.xlen(keys.sseStream(busy))).toBe(2);
    expect(await conn.get(keys.taskCarrier(taskId))).toBe('another-stream');
    expect(await conn.exists(keys.sseConnection(busy))).toBe(0);
    expect((await log.readAfter(busy, '0-0')).map((event) => event.data)).toEqual(['{"p":1}', '{"r":2}']);
  });

  it('keeps the one event of a quiet stream in its state as a listpack, whole bytes for any length', async () => {
    const { conn, keys, log } = setup();
    const taskId = `${SESSION.slice(0, 4)}${'k'.repeat(24)}`;
    // Multi-byte characters across the 64-byte pieces; one short; one too long for pieces.
    const replies = [
      JSON.stringify({ jsonrpc: '2.0', id: 1, result: { content: [{ type: 'text', text: 'é€😀'.repeat(40) }] } }),
      '{"r":1}',
      JSON.stringify({ jsonrpc: '2.0', id: 3, result: { content: [{ type: 'text', text: 'x'.repeat(7000) }] } }),
    ];
    for (const [i, data] of replies.entries()) {
      const streamId = EventLog.newStreamId(SESSION);
      await log.create({ streamId, kind: 'result', session: 'digest', taskId, rpcId: i }, `conn-${i}`, 10_000);
      const entryId = (await log.finish(streamId, `conn-${i}`, taskId, data, { done: '1' })) as string;
      expect(await log.readAfter(streamId, '0-0')).toEqual([
        { id: EventLog.eventId(streamId, entryId), entryId, data },
      ]);
      expect(await log.complete(streamId, '0-0')).toBe(true);
      expect(await conn.object('ENCODING', keys.sseState(streamId))).toBe(i === 2 ? 'hashtable' : 'listpack');
    }
  });

  it('numbers events in order and lets only the connection that holds the stream append', async () => {
    const { log } = setup();
    const streamId = EventLog.newStreamId(SESSION);
    await log.create({ streamId, kind: 'session', session: 'digest' }, 'conn-a', 10_000);
    const first = await log.append(streamId, 'conn-a', '');
    const second = await log.append(streamId, 'conn-a', '{"n":2}', { feed: '5-0' });
    expect(first).toMatch(new RegExp(`^${streamId}_\\d+-1$`));
    expect(second).toMatch(new RegExp(`^${streamId}_\\d+-2$`));
    expect(EventLog.parseEventId(second as string)).toEqual({
      streamId,
      entryId: (second as string).slice(streamId.length + 1),
    });
    // A resumption elsewhere takes the stream over: the old connection is fenced off.
    await log.takeConnection(streamId, 'conn-b', 10_000);
    expect(await log.append(streamId, 'conn-a', '{"n":3}')).toBeUndefined();
    expect(await log.refreshConnection(streamId, 'conn-a', 10_000)).toBe(false);
    const third = await log.append(streamId, 'conn-b', '{"n":3}');
    expect(third).toMatch(/-3$/);
    const entry = (id: string | undefined) => (id as string).slice(streamId.length + 1);
    expect(await log.readAfter(streamId, entry(first))).toEqual([
      { id: second, entryId: entry(second), data: '{"n":2}' },
      { id: third, entryId: entry(third), data: '{"n":3}' },
    ]);
    expect(await log.state(streamId)).toEqual({
      streamId,
      kind: 'session',
      session: 'digest',
      done: false,
      feedPosition: '5-0',
    });
    expect(await log.complete(streamId, entry(first))).toBe(true);
    expect(await log.complete(streamId, entry(third))).toBe(true);
  });

  it('names feed positions in session-stream ids, stores them with logged events, and refuses malformed ids', async () => {
    const { log, conn, keys } = setup();
    const streamId = EventLog.newStreamId(SESSION);
    expect(EventLog.eventId(streamId, '0-0', '17-3')).toBe(`${streamId}_0-0_17-3`);
    expect(EventLog.parseEventId(`${streamId}_0-0_17-3`)).toEqual({ streamId, entryId: '0-0', feedEntryId: '17-3' });
    expect(EventLog.parseEventId(`${streamId}_5-1`)).toEqual({ streamId, entryId: '5-1' });
    for (const bad of [
      `${streamId}_5-1_`,
      `${streamId}_5-1_7`,
      `${streamId}_5-1_7-2_9-9`,
      `${streamId}__7-2`,
      `${streamId.slice(1)}_5-1_7-2`,
      `${streamId}_5-1_7-2 `,
      `${streamId}_5-1_-7-2`,
      `${streamId}_5-1_123456789012345678901-1`,
    ]) {
      expect(EventLog.parseEventId(bad), bad).toBeUndefined();
    }

    await log.create({ streamId, kind: 'session', session: 'digest' }, 'conn-a', 10_000);
    // Nothing logged yet: a resumption from the position before the first event loses nothing.
    expect(await log.complete(streamId, '0-0')).toBe(true);
    const logged = (await log.append(streamId, 'conn-a', '{"n":1}', {}, '42-0')) as string;
    const plain = (await log.append(streamId, 'conn-a', '{"n":2}')) as string;
    const entry = (id: string) => id.slice(streamId.length + 1);
    expect(await log.readAfter(streamId, '0-0')).toEqual([
      { id: logged, entryId: entry(logged), data: '{"n":1}', feed: '42-0' },
      { id: plain, entryId: entry(plain), data: '{"n":2}' },
    ]);
    expect(await log.complete(streamId, '0-0')).toBe(true);
    // The state names no feed position: the event ids do.
    expect((await log.state(streamId))?.feedPosition).toBeUndefined();

    // Keeping the stream alive extends its lease, log and state, without an event; fenced like an append.
    await conn.pexpire(keys.sseStream(streamId), 1000);
    await conn.pexpire(keys.sseState(streamId), 1000);
    expect(await log.keepAlive(streamId, 'conn-a', 20_000)).toBe(true);
    expect(await conn.pttl(keys.sseConnection(streamId))).toBeGreaterThan(10_000);
    expect(await conn.pttl(keys.sseStream(streamId))).toBeGreaterThan(50_000);
    expect(await conn.pttl(keys.sseState(streamId))).toBeGreaterThan(50_000);
    expect(await conn.xlen(keys.sseStream(streamId))).toBe(2);
    expect(await log.keepAlive(streamId, 'conn-b', 20_000)).toBe(false);
    // A log gone while its state lives (they expire together): events after the first are known lost.
    await conn.del(keys.sseStream(streamId));
    expect(await log.complete(streamId, entry(logged))).toBe(false);
    expect(await log.complete(streamId, entry(plain))).toBe(true);
  });

  it('tells a resumption when events after its position were trimmed away', async () => {
    const { log } = setup(10);
    const streamId = EventLog.newStreamId(SESSION);
    await log.create({ streamId, kind: 'direct', session: 'd', taskId: 't', rpcId: 7 }, 'c', 10_000);
    // Sent together: one connection runs them in order. MAXLEN ~ trims whole nodes of 100 entries.
    const appended = await Promise.all(Array.from({ length: 300 }, (_v, i) => log.append(streamId, 'c', `{"i":${i}}`)));
    const ids = appended.map((eventId) => EventLog.parseEventId(eventId as string)?.entryId as string);
    expect(await log.complete(streamId, ids[0] as string)).toBe(false);
    expect(await log.complete(streamId, ids[298] as string)).toBe(true);
    expect(await log.complete(streamId, ids[299] as string)).toBe(true);
    expect(await log.complete(streamId, '1-999')).toBe(false);
    expect((await log.state(streamId))?.rpcId).toBe(7);
  });

  it('appends an outbox message once when its command comes again after a lost reply (a resend on reconnect)', async () => {
    const { outbox, store, keys, conn } = setup();
    const task = await store.create({ owner: newSessionId() });
    const taskKey = keys.task(task.taskId);
    const scriptKeys: [string, string, string, string, string, string] = [
      taskKey,
      keys.taskOutbox(task.taskId),
      keys.taskCarrier(task.taskId),
      keys.taskChannel(task.taskId),
      taskKey,
      taskKey,
    ];
    // The very command twice, as a connection that reconnects sends again what it had no reply to.
    const args: [string, number, string, string] = ['{"type":"progress","progress":1}', 1000, task.taskId, 'a1'];
    const first = await new Scripts(conn).appendOutbox(scriptKeys, args);
    expect(first).toEqual({ kind: 'appended', entryId: expect.stringMatching(/^\d+-\d+$/) });
    expect(await new Scripts(conn).appendOutbox(scriptKeys, args)).toEqual(first);
    expect((await outbox.read(task.taskId)).map((entry) => entry.message)).toEqual([{ type: 'progress', progress: 1 }]);
    // A new append of the same message is a new entry.
    await outbox.append(task.taskId, { type: 'progress', progress: 1 });
    expect(await outbox.read(task.taskId)).toHaveLength(2);
  });

  it('relays each outbox entry once across streams: the carrier while it holds the lease, else the GET stream', async () => {
    const { log, delivery, outbox, feed, store, keys, conn } = setup();
    const sessions = new SessionStore({ redis: conn, keys, idleTtlMs: 60_000 });
    const session = (await sessions.create({ protocolVersion: '2025-11-25', clientCapabilities: {} })).sessionId;
    const task = await store.create({ owner: session, session });
    // Before the session's GET stream exists nobody could read its feed: nothing is written there.
    await outbox.append(task.taskId, { type: 'progress', progress: 0 });
    expect(await conn.exists(keys.sessionFeed(session))).toBe(0);
    const [getStream, resultStream] = [EventLog.newStreamId(session), EventLog.newStreamId(session)];
    expect(await sessions.claimStream(session, getStream, 10_000)).toBe('ok');
    await log.create({ streamId: getStream, kind: 'session', session: 'd' }, 'g', 10_000);
    await log.create(
      { streamId: resultStream, kind: 'result', session: 'd', taskId: task.taskId, rpcId: 1 },
      'r',
      10_000,
    );
    const head = await feed.head(session);
    const one = (await outbox.append(task.taskId, { type: 'progress', progress: 1 })) as string;
    // No carrier: the arrival goes on the session's feed, and only the GET stream may take it.
    expect((await feed.readAfter(session, head)).map((entry) => entry.kind)).toEqual(['outbox']);
    const relay = (streamId: string, connection: string, mode: 'carrier' | 'fallback', entryId: string) =>
      log.relay(streamId, connection, {
        taskId: task.taskId,
        mode,
        entryId,
        data: `{"e":"${entryId}"}`,
        expiresAt: Date.now() + 60_000,
        // The GET stream's events store the feed position they went out at; the carrier's have none.
        ...(mode === 'fallback' && { feedPosition: '9-9' }),
      });
    expect(await relay(resultStream, 'r', 'carrier', one)).toEqual({ kind: 'not_carrier' });
    expect((await relay(getStream, 'g', 'fallback', one)).kind).toBe('relayed');
    expect(await relay(getStream, 'g', 'fallback', one)).toEqual({ kind: 'stale' });
    // The tasks/result stream claims the task; the GET stream may take nothing more of it.
    expect(await delivery.claim(task.taskId, resultStream, 'r', 10_000)).toBe('ok');
    expect(await delivery.claim(task.taskId, getStream, 'g', 10_000)).toBe('taken');
    expect(await delivery.claim(task.taskId, resultStream, 'stale-connection', 10_000)).toBe('fenced');
    const two = (await outbox.append(task.taskId, { type: 'progress', progress: 2 })) as string;
    expect(await relay(getStream, 'g', 'fallback', two)).toEqual({ kind: 'not_carrier' });
    expect((await relay(resultStream, 'r', 'carrier', two)).kind).toBe('relayed');
    expect(await delivery.cursor(task.taskId)).toBe(two);
    expect((await log.readAfter(getStream, '0-0')).map((event) => [event.data, event.feed])).toEqual([
      [`{"e":"${one}"}`, '9-9'],
    ]);
    expect((await log.readAfter(resultStream, '0-0')).map((event) => [event.data, event.feed])).toEqual([
      [`{"e":"${two}"}`, undefined],
    ]);
    // A carried task's arrivals do not go on the feed; releasing it does (the GET stream takes over).
    const before = (await feed.readAfter(session, head)).length;
    await outbox.append(task.taskId, { type: 'progress', progress: 3 });
    expect((await feed.readAfter(session, head)).length).toBe(before);
    await delivery.release(task.taskId, resultStream, 'r');
    expect(await conn.exists(keys.taskCarrier(task.taskId))).toBe(0);
    expect((await feed.readAfter(session, head)).at(-1)).toMatchObject({ kind: 'outbox', taskId: task.taskId });
    expect(await delivery.sessionTasks(task.ownerId, session)).toEqual([
      { taskId: task.taskId, undelivered: true, carried: false, waiting: false },
    ]);
  });
});
