import { startTcpRelay, useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import {
  decodeTaskMessage,
  EventBus,
  Keys,
  type TaskEnd,
  TaskFollower,
  TaskOutbox,
  TaskStore,
  type TaskWaiter,
} from '../src/index.js';

describe('TaskFollower', () => {
  const redis = useRedis();
  const buses: EventBus[] = [];
  afterEach(async () => {
    await Promise.all(buses.splice(0).map((bus) => bus.close()));
  });

  const setUp = (safetyMs: number) => {
    const connection = redis.connect();
    const keys = new Keys(redis.prefix);
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'task-follower-test-secret-0123456789' });
    const bus = new EventBus(connection, keys);
    buses.push(bus);
    const follower = new TaskFollower({ bus, store, safetyMs });
    const create = async () => (await store.create({ owner: 'owner', kind: 'task', tool: 'idle' })).taskId;
    const finishSilently = (taskId: string) => connection.hset(keys.task(taskId), 'status', 'completed');
    const channels = async (taskId: string) =>
      Number(((await connection.pubsub('NUMSUB', keys.taskChannel(taskId))) as [string, number])[1]);
    return { follower, store, bus, keys, connection, create, finishSilently, channels };
  };

  it('settles every waiter of a task from one subscription, on the published change', async () => {
    const { follower, store, bus, create, channels } = setUp(60_000);
    const taskId = await create();
    const waits = [0, 1, 2].map(() => follower.untilTerminal(taskId, { signal: new AbortController().signal }));
    expect(follower.followed).toBe(1);
    // Three waiters, one channel subscription on the bus's one connection.
    while ((await channels(taskId)) !== 1) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(bus.channelCount).toBe(1);
    await store.finish({ taskId, ownerId: Keys.ownerId('owner') }, { result: { content: [] } });
    const outcomes = await Promise.all(waits);
    expect(outcomes.map((outcome) => outcome.kind === 'terminal' && outcome.task.status)).toEqual([
      'completed',
      'completed',
      'completed',
    ]);
    expect(follower.followed).toBe(0);
    while ((await channels(taskId)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it('finds changes nobody published by its safety re-read, and tasks that are gone', async () => {
    const { follower, connection, keys, create, finishSilently, channels } = setUp(50);
    const [done, gone, running] = [await create(), await create(), await create()];
    const waiting = new AbortController();
    const waits = [done, gone, running].map((taskId) => follower.untilTerminal(taskId, { signal: waiting.signal }));
    for (const taskId of [done, gone, running]) {
      while ((await channels(taskId)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await finishSilently(done);
    await connection.del(keys.task(gone));
    expect((await waits[0])?.kind).toBe('terminal');
    expect(await waits[1]).toEqual({ kind: 'gone' });
    expect(follower.followed).toBe(1);
    // The running one is still watched until its waiter goes away.
    const controller = new AbortController();
    const late = follower.untilTerminal(running, { signal: controller.signal });
    controller.abort();
    expect(await late).toEqual({ kind: 'aborted' });
    expect(follower.followed).toBe(1);
    waiting.abort();
    expect(await waits[2]).toEqual({ kind: 'aborted' });
    expect(follower.followed).toBe(0);
  });

  it('spreads its safety re-read over the interval: a share of the watched tasks each second', async () => {
    const { follower, create, finishSilently, channels } = setUp(4000);
    const ids = await Promise.all(Array.from({ length: 12 }, () => create()));
    const started = Date.now();
    let settled = 0;
    const waits = ids.map((taskId) =>
      follower.untilTerminal(taskId, { signal: new AbortController().signal }).then((outcome) => {
        settled += 1;
        return outcome;
      }),
    );
    for (const taskId of ids) {
      while ((await channels(taskId)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await Promise.all(ids.map((taskId) => finishSilently(taskId)));
    // Each tick (every second) re-reads a quarter of them: after two and a half, some are found, not all.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + 2500 - Date.now())));
    expect(settled).toBeGreaterThan(0);
    expect(settled).toBeLessThan(12);
    const outcomes = await Promise.all(waits);
    expect(outcomes.map((outcome) => outcome.kind)).toEqual(ids.map(() => 'terminal'));
    expect(follower.followed).toBe(0);
  }, 15_000);

  it('re-reads a lone followed task once per round of the safety interval, not at every tick', async () => {
    const { follower, connection, keys, create, channels } = setUp(5000);
    const taskId = await create();
    const monitor = await connection.duplicate().monitor();
    let reads = 0;
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0]?.toLowerCase() === 'hget' && args[1] === keys.task(taskId)) reads += 1;
    });
    const controller = new AbortController();
    const wait = follower.untilTerminal(taskId, { signal: controller.signal });
    while ((await channels(taskId)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await new Promise((resolve) => setTimeout(resolve, 4500));
    monitor.disconnect();
    controller.abort();
    expect(await wait).toEqual({ kind: 'aborted' });
    expect(reads).toBe(1);
  }, 15_000);

  it('re-reads every watched task after the subscriber reconnects', async () => {
    const { follower, bus, create, finishSilently, channels } = setUp(600_000);
    const taskId = await create();
    const wait = follower.untilTerminal(taskId, { signal: new AbortController().signal });
    while ((await channels(taskId)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    await finishSilently(taskId);
    // Only a reconnect (or the ten-minute safety re-read) can find the change now.
    bus.connection.disconnect(true);
    expect((await wait).kind).toBe('terminal');
  });

  it('reads again within seconds, not at the safety interval, when a read failed', async () => {
    const { bus, keys, create, finishSilently, channels } = setUp(600_000);
    const taskId = await create();
    // The follower's reads go through a relay that refuses connections until it is opened.
    const relay = await startTcpRelay(redis.server.port, { closed: true });
    const connection = redis.connect({ port: relay.port, enableOfflineQueue: false, retryStrategy: () => 100 });
    connection.on('error', () => {});
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'task-follower-test-secret-0123456789' });
    const reading = new TaskFollower({ bus, store, safetyMs: 600_000 });
    const wait = reading.untilTerminal(taskId, { signal: new AbortController().signal });
    while ((await channels(taskId)) === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    // Finished without a message: only a read finds it, and the one after subscribing failed.
    await finishSilently(taskId);
    await relay.open();
    try {
      expect((await wait).kind).toBe('terminal');
    } finally {
      await relay.close();
    }
  }, 15_000);

  it('answers an aborted wait at once and keeps nothing of it', async () => {
    const { follower, create } = setUp(60_000);
    const taskId = await create();
    const controller = new AbortController();
    controller.abort();
    expect(await follower.untilTerminal(taskId, { signal: controller.signal })).toEqual({ kind: 'aborted' });
    expect(follower.followed).toBe(0);
  });

  it('tells a waiter that follows changes of each one, then of the end with the carried outcome', async () => {
    const { follower, store, create, channels } = setUp(60_000);
    const taskId = await create();
    const ref = { taskId, ownerId: Keys.ownerId('owner') };
    const heard: string[] = [];
    let ended: TaskEnd | undefined;
    const waiter: TaskWaiter = {
      taskEnded: (end) => {
        ended = end;
      },
      taskChanged: (change) => heard.push(change === undefined ? 'read again' : change.task.status),
    };
    follower.follow(taskId, waiter);
    while ((await channels(taskId)) !== 1) await new Promise((resolve) => setTimeout(resolve, 10));
    // The first read after subscribing: the task as it is.
    while (heard.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['working']);
    await store.requireInput(ref);
    await store.resume(ref);
    await store.finish(ref, { result: { content: [{ type: 'text', text: 'done' }] } });
    while (ended === undefined) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['working', 'input_required', 'working']);
    expect(ended).toMatchObject({
      kind: 'terminal',
      announced: true,
      task: { taskId, status: 'completed', ownerId: '' },
      outcome: { result: { content: [{ type: 'text', text: 'done' }] } },
    });
    expect(follower.followed).toBe(0);
    while ((await channels(taskId)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it('tells the waiters that follow the outbox of each arrival, in order with the changes, on the one task channel', async () => {
    const { follower, store, bus, connection, keys, create, channels } = setUp(60_000);
    const taskId = await create();
    const ref = { taskId, ownerId: Keys.ownerId('owner') };
    const outbox = new TaskOutbox({ redis: connection, keys });
    const heard: string[] = [];
    const carrier: TaskWaiter = {
      taskEnded: (end) => heard.push(`end ${end.kind}`),
      taskChanged: (change) => heard.push(change === undefined ? 'read again' : change.task.status),
      outboxArrived: (entryId) => heard.push(`arrival ${entryId}`),
    };
    // A waiter without the hook hears only the end.
    let plainEnded = false;
    follower.follow(taskId, carrier);
    follower.follow(taskId, {
      taskEnded: () => {
        plainEnded = true;
      },
    });
    await follower.live(taskId);
    // Live: the task's one channel carries its changes and its outbox's arrivals (no channel of the outbox's own).
    expect(await channels(taskId)).toBe(1);
    expect(bus.channelCount).toBe(1);
    while (heard.length === 0) await new Promise((resolve) => setTimeout(resolve, 10));
    const first = await outbox.append(taskId, { type: 'progress', progress: 1 });
    await store.requireInput(ref);
    const second = await outbox.append(taskId, { type: 'progress', progress: 2 });
    await store.finish(ref, { result: { content: [] } });
    while (!plainEnded) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(heard).toEqual(['working', `arrival ${first}`, 'input_required', `arrival ${second}`, 'end terminal']);
    expect(follower.followed).toBe(0);
    // Not followed: live at once.
    await expect(follower.live(taskId)).resolves.toBeUndefined();
  });

  it('forgets a waiter that unfollows, and ends the subscription with the last one', async () => {
    const { follower, create, channels } = setUp(60_000);
    const taskId = await create();
    const waiter: TaskWaiter = { taskEnded: () => {} };
    follower.follow(taskId, waiter);
    while ((await channels(taskId)) !== 1) await new Promise((resolve) => setTimeout(resolve, 10));
    follower.unfollow(taskId, waiter);
    follower.unfollow(taskId, waiter);
    expect(follower.followed).toBe(0);
    while ((await channels(taskId)) > 0) await new Promise((resolve) => setTimeout(resolve, 10));
  });

  it('makes no first read for a new follow whose waiters read the task themselves, and one when any does not', async () => {
    const { follower, create, finishSilently } = setUp(60_000);
    // Both tasks ended with nothing published: only a read can tell.
    const [alone, mixed] = [await create(), await create()];
    await Promise.all([finishSilently(alone), finishSilently(mixed)]);
    const ends: string[] = [];
    const reader = (name: string): TaskWaiter => ({ readsOnceLive: true, taskEnded: () => void ends.push(name) });
    follower.follow(alone, reader('alone reader'));
    await follower.live(alone);
    follower.follow(mixed, reader('mixed reader'));
    follower.follow(mixed, { taskEnded: () => void ends.push('mixed plain') });
    await follower.live(mixed);
    await expect.poll(() => ends.length).toBe(2);
    // The follower's read of the mixed follow told both its waiters; the lone reader was told nothing.
    expect(ends.sort()).toEqual(['mixed plain', 'mixed reader']);
    expect(follower.followed).toBe(1);
  });
});

describe('decodeTaskMessage', () => {
  it('decodes a snapshot and a carried outcome, and drops an owner', () => {
    const message = JSON.stringify({
      taskId: 't1',
      status: 'failed',
      statusMessage: 'boom',
      createdAt: '1000',
      lastUpdatedAt: '2000',
      ttl: '60000',
      version: '3',
      kind: 'direct',
      tool: 'echo',
      owner: 'someone',
      outcome: { error: { code: -32603, message: 'boom' } },
    });
    expect(decodeTaskMessage('t1', message)).toEqual({
      task: {
        taskId: 't1',
        status: 'failed',
        statusMessage: 'boom',
        createdAt: 1000,
        lastUpdatedAt: 2000,
        ttl: 60000,
        version: 3,
        kind: 'direct',
        tool: 'echo',
        ownerId: '',
      },
      terminal: true,
      outcome: { error: { code: -32603, message: 'boom' } },
    });
  });

  it('reads a running task as not terminal, and an outcome that is not one as none', () => {
    const change = decodeTaskMessage('t2', '{"status":"input_required","version":"2","outcome":{"result":1}}');
    expect(change?.terminal).toBe(false);
    expect(change?.task.status).toBe('input_required');
    expect(change && 'outcome' in change).toBe(false);
  });

  it('refuses what is not a snapshot: not JSON, not an object, no valid status', () => {
    for (const message of ['not json', '[]', 'null', '"working"', '{}', '{"status":"done"}', '{"status":3}']) {
      expect(decodeTaskMessage('t3', message)).toBeUndefined();
    }
  });
});
