import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { EventLog, Keys, SessionFeed, TaskDelivery, TaskOutbox } from '../src/index.js';
import { makeStore } from './support.js';

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

  it('numbers events in order and lets only the connection that holds the stream append', async () => {
    const { log } = setup();
    const streamId = EventLog.newStreamId();
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
      { id: second, data: '{"n":2}' },
      { id: third, data: '{"n":3}' },
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

  it('tells a resumption when events after its position were trimmed away', async () => {
    const { log } = setup(10);
    const streamId = EventLog.newStreamId();
    await log.create({ streamId, kind: 'direct', session: 'd', taskId: 't', rpcId: 7 }, 'c', 10_000);
    // Sent together: one connection runs them in order. MAXLEN ~ trims whole nodes of 100 entries.
    const appended = await Promise.all(Array.from({ length: 300 }, (_v, i) => log.append(streamId, 'c', `{"i":${i}}`)));
    const ids = appended.map((eventId) => EventLog.parseEventId(eventId as string)?.entryId as string);
    expect(await log.complete(streamId, ids[0] as string)).toBe(false);
    expect(await log.complete(streamId, ids[298] as string)).toBe(true);
    expect(await log.complete(streamId, '1-999')).toBe(false);
    expect((await log.state(streamId))?.rpcId).toBe(7);
  });

  it('relays each outbox entry once across streams: the carrier while it holds the lease, else the GET stream', async () => {
    const { log, delivery, outbox, feed, store, keys, conn } = setup();
    const session = `session-${redis.prefix}`;
    const task = await store.create({ owner: 'alice', session });
    const [getStream, resultStream] = [EventLog.newStreamId(), EventLog.newStreamId()];
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
