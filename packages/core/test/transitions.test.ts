import type { TaskStatus } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Keys, recordFromFields, type TaskRef, TaskStore, taskMetrics, toTask } from '../src/index.js';
import { newTaskId } from '../src/tasks/ids.js';
import type { TransitionResult } from '../src/tasks/task-store.js';
import { CURSOR_SECRET, makeStore, sleep } from './support.js';

/** Collects what is published on one channel; `settle()` returns it once everything published so far arrived. */
async function watch(subscriber: Redis, publisher: Redis, channel: string) {
  const sync = `${channel}~sync`;
  const messages: string[] = [];
  let waiting: { token: string; resolve: () => void } | undefined;
  subscriber.on('message', (ch: string, message: string) => {
    if (ch === channel) messages.push(message);
    else if (ch === sync && waiting?.token === message) waiting.resolve();
  });
  await subscriber.subscribe(channel, sync);
  let round = 0;
  return {
    async settle(): Promise<string[]> {
      const token = String(++round);
      const arrived = new Promise<void>((resolve) => {
        waiting = { token, resolve };
      });
      await publisher.publish(sync, token);
      await arrived;
      return messages.splice(0);
    },
  };
}

/** Every transition a worker or the broker can attempt, with a fixed message. */
const attempts: [string, (store: TaskStore, ref: TaskRef) => Promise<TransitionResult>][] = [
  ['start', (s, r) => s.start(r, 2)],
  ['requireInput', (s, r) => s.requireInput(r, 'late input')],
  ['resume', (s, r) => s.resume(r, 'late resume')],
  ['setStatusMessage', (s, r) => s.setStatusMessage(r, 'late message')],
  ['finish completed', (s, r) => s.finish(r, { result: { content: [] } })],
  ['finish failed', (s, r) => s.finish(r, { error: { code: -32000, message: 'late failure' } })],
  ['cancelAsBroker', (s, r) => s.cancelAsBroker(r, 'late cancel')],
];

describe('transition scripts', () => {
  const redis = useRedis();

  it('[LIF-1] resume of a working task and requireInput of a waiting one are refused as illegal, silently', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const task = await store.create({ owner: 'alice' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    const channel = await watch(redis.connect(), conn, store.keys.taskChannel(task.taskId));
    const before = await conn.hgetall(store.keys.task(task.taskId));
    expect(await store.resume(ref, 'x')).toEqual({ ok: false, reason: 'illegal', status: 'working' });
    expect(await conn.hgetall(store.keys.task(task.taskId))).toEqual(before);
    expect(await channel.settle()).toEqual([]);

    const waiting = await store.requireInput(ref, 'need a file');
    expect(waiting.ok && waiting.task).toMatchObject({
      status: 'input_required',
      statusMessage: 'need a file',
      version: 2,
    });
    const during = await conn.hgetall(store.keys.task(task.taskId));
    expect(await store.requireInput(ref, 'y')).toEqual({ ok: false, reason: 'illegal', status: 'input_required' });
    expect(await conn.hgetall(store.keys.task(task.taskId))).toEqual(during);
    expect((await channel.settle()).map((m) => JSON.parse(m).version)).toEqual(['2']);
  });

  it('[LIF-1] every visible change bumps version by one, stamps lastUpdatedAt and publishes the returned snapshot', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const task = await store.create({ owner: 'alice', tool: 'echo' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    const channel = await watch(redis.connect(), conn, store.keys.taskChannel(task.taskId));
    // The first attempt of a working task changes nothing a client sees: no new version, nothing published.
    const first = await store.start(ref, 1);
    expect(first).toMatchObject({ ok: true, task: { status: 'working', version: 1 } });
    expect(first.ok && first.task.lastUpdatedAt).toBe(task.lastUpdatedAt);
    expect(await channel.settle()).toEqual([]);
    const steps: [TaskStatus, () => Promise<TransitionResult>][] = [
      ['working', () => store.setStatusMessage(ref, 'halfway')],
      ['input_required', () => store.requireInput(ref, 'which file?')],
      ['input_required', () => store.setStatusMessage(ref, 'still waiting')],
      ['working', () => store.resume(ref)],
      ['input_required', () => store.requireInput(ref)],
      // A retried attempt may start from input_required: back to working.
      ['working', () => store.start(ref, 2)],
      ['completed', () => store.finish(ref, { result: { content: [{ type: 'text', text: 'done' }] } })],
    ];
    let previous = task;
    for (const [status, step] of steps) {
      await sleep(2);
      const result = await step();
      if (!result.ok) throw new Error(`step to ${status} refused: ${JSON.stringify(result)}`);
      expect(result.task.status).toBe(status);
      expect(result.task.version).toBe(previous.version + 1);
      expect(result.task.lastUpdatedAt).toBeGreaterThan(previous.lastUpdatedAt);
      expect(result.task.createdAt).toBe(task.createdAt);
      const [published] = await channel.settle();
      expect(recordFromFields(task.taskId, JSON.parse(published!))).toEqual(result.task);
      previous = { ...previous, ...result.task };
    }
    const stored = await store.read(task.taskId);
    expect(stored).toMatchObject({ status: 'completed', version: 8, attempt: 2, statusMessage: 'still waiting' });
    expect(await channel.settle()).toEqual([]);
    expect(stored!.lastUpdatedAt).toBeGreaterThan(stored!.createdAt);
  });

  it('records when each attempt started (Redis clock), which the queue-wait metric measures from creation', async () => {
    const registry = new Registry();
    const store = new TaskStore({
      redis: redis.connect(),
      keys: new Keys(redis.prefix),
      cursorSecret: CURSOR_SECRET,
      observer: taskMetrics(registry),
    });
    const task = await store.create({ owner: 'alice', tool: 'echo' });
    const ref = { taskId: task.taskId, ownerId: task.ownerId };
    await sleep(120);
    const first = await store.start(ref, 1);
    const started = (await store.read(task.taskId))?.startedAt ?? 0;
    expect(first.ok && first.task.version).toBe(1);
    expect(started - task.createdAt).toBeGreaterThanOrEqual(100);
    const wait = (await registry.getSingleMetric('taskgate_task_queue_wait_seconds')?.get())?.values ?? [];
    const sum = wait.find((v) => (v as { metricName?: string }).metricName === 'taskgate_task_queue_wait_seconds_sum');
    expect(sum?.value).toBe((started - task.createdAt) / 1000);
    await sleep(5);
    await store.start(ref, 2);
    expect((await store.read(task.taskId))?.startedAt).toBeGreaterThan(started);
  });

  it('[LIF-1] a terminal task never changes: every transition is refused, nothing is written or published', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const terminals: [TaskStatus, (ref: TaskRef) => Promise<unknown>][] = [
      ['completed', (r) => store.finish(r, { result: { content: [] } })],
      ['failed', (r) => store.finish(r, { result: { content: [], isError: true } })],
      ['cancelled', (r) => store.cancelAsBroker(r, 'job lost')],
    ];
    for (const [status, end] of terminals) {
      const task = await store.create({ owner: 'alice' });
      const ref = { taskId: task.taskId, ownerId: task.ownerId };
      await end(ref);
      const channel = await watch(redis.connect(), conn, store.keys.taskChannel(task.taskId));
      const before = await conn.hgetall(store.keys.task(task.taskId));
      expect(before.status).toBe(status);
      for (const [name, attempt] of attempts) {
        expect(await attempt(store, ref), `${name} on ${status}`).toEqual({ ok: false, reason: 'terminal', status });
      }
      expect(await conn.hgetall(store.keys.task(task.taskId))).toEqual(before);
      expect(await channel.settle()).toEqual([]);
      expect(await conn.zscore(store.keys.ownerActive(task.ownerId), task.taskId)).toBeNull();
    }
  });

  it('transitions of an unknown task answer not_found and create nothing', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const ref = { taskId: newTaskId('tag0'), ownerId: 'someone' };
    for (const [name, attempt] of attempts) {
      expect(await attempt(store, ref), name).toEqual({ ok: false, reason: 'not_found' });
    }
    expect(await conn.keys(`${redis.prefix}:*`)).toEqual([]);
  });

  it('[CRT-4][GET-2] create, get, list, cancel and status notifications carry ISO 8601 times', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const subscriber = redis.connect();
    const messages: string[] = [];
    subscriber.on('pmessage', (_p: string, _c: string, m: string) => messages.push(m));
    await subscriber.psubscribe(`${store.keys.prefix}:*:ch:task:*`);
    const created = await store.create({ owner: 'alice' });
    expect(created.status).toBe('working');
    await sleep(2);
    const cancelled = await store.cancel('alice', created.taskId);
    const iso = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
    const responses = [
      toTask(created),
      await store.get('alice', created.taskId),
      ...(await store.list('alice')).tasks,
      cancelled,
    ];
    await conn.publish(store.keys.taskChannel('~sync'), '{}');
    // Creation is not published (its creator has it in the answer): the cancellation, then the sync message.
    await expect.poll(() => messages.length).toBe(2);
    const notified = messages.slice(0, 1).map((m) => toTask(recordFromFields(created.taskId, JSON.parse(m))));
    for (const task of [...responses, ...notified]) {
      expect(task.createdAt).toMatch(iso);
      expect(task.lastUpdatedAt).toMatch(iso);
      expect(Date.parse(task.lastUpdatedAt)).toBeGreaterThanOrEqual(Date.parse(task.createdAt));
      expect(task.createdAt).toBe(new Date(created.createdAt).toISOString());
    }
    expect(notified.map((t) => t.status)).toEqual(['cancelled']);
    expect(cancelled.lastUpdatedAt).toBe(notified[0]!.lastUpdatedAt);
    expect(Date.parse(cancelled.lastUpdatedAt)).toBeGreaterThan(Date.parse(cancelled.createdAt));
  });
});
