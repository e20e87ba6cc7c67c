import { TaskOutbox } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import { beforeAll, describe, expect, it } from 'vitest';
import { until } from './support/gateway.js';
import { useWorkerProcesses } from './support/process-env.js';
import type { WorkerProcess } from './support/worker-process.js';

const STATUS_CHECK_MS = 500;

describe('a forked worker process: cancellation and progress', () => {
  const redis = useRedis();
  const env = useWorkerProcesses(redis);
  let worker: WorkerProcess;
  beforeAll(async () => {
    worker = await env.start({ STATUS_CHECK_MS: String(STATUS_CHECK_MS) });
  });

  it('[CNL-2][CNL-3] a cancel from another process aborts the handler’s signal; the task ends cancelled', async () => {
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper', { ms: 60_000 });
    await worker.next('started', (event) => event.taskId === taskId);
    const cancelledAt = Date.now();
    const cancelled = await gateway.store.cancel('alice', taskId);
    expect(cancelled.status).toBe('cancelled');
    const aborted = await worker.next('aborted', (event) => event.taskId === taskId, 5000);
    // Promptly (pub/sub, or the periodic check every STATUS_CHECK_MS); loose, so a loaded machine holds it.
    expect(Date.now() - cancelledAt).toBeLessThan(5000);
    expect(aborted.kind).toBe('cancelled');
    const queue = gateway.queues.queue('tool.sleeper');
    await until(
      async () => ((await queue.getJob(taskId)) === undefined ? true : undefined),
      5000,
      'the job to complete',
    );
    expect(await gateway.read(taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Cancelled by the requestor',
    });
    expect(await gateway.outcome(taskId)).toBeUndefined();
  });

  it('[CNL-3] discards the late result of a handler that ignores the abort', async () => {
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper', { ms: 60_000, lateMs: 300 });
    await worker.next('started', (event) => event.taskId === taskId);
    await gateway.store.cancel('alice', taskId);
    const before = await gateway.read(taskId);
    await worker.next('aborted', (event) => event.taskId === taskId);
    await worker.next('returned', (event) => event.taskId === taskId);
    const queue = gateway.queues.queue('tool.sleeper');
    await until(
      async () => ((await queue.getJob(taskId)) === undefined ? true : undefined),
      5000,
      'the job to complete',
    );
    const after = await gateway.read(taskId);
    expect(after).toEqual(before);
    expect(after?.status).toBe('cancelled');
    expect(await gateway.outcome(taskId)).toBeUndefined();
  });

  it('notices a cancel whose pub/sub message was lost, through the periodic status check', async () => {
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper', { ms: 60_000 });
    await worker.next('started', (event) => event.taskId === taskId);
    // Change the status without publishing, as if the message had been lost.
    await gateway.redis.hset(gateway.keys.task(taskId), 'status', 'cancelled');
    const changedAt = Date.now();
    const aborted = await worker.next('aborted', (event) => event.taskId === taskId, 5000);
    expect(aborted.kind).toBe('cancelled');
    // Nothing was published: only the periodic check can have found it, well before the handler's 60 s end.
    expect(Date.now() - changedAt).toBeLessThan(STATUS_CHECK_MS + 5000);
    expect(await gateway.outcome(taskId)).toBeUndefined();
  });

  it('delivers 100 fire-and-forget progress calls to the outbox in order, each announced', async () => {
    const gateway = env.gateway();
    const announcer = redis.connect();
    const announced: string[] = [];
    // Announced on the task's channel, between its snapshots (JSON): the outbox's arrivals are its entry ids.
    announcer.on('pmessage', (_pattern: string, _channel: string, message: string) => {
      if (/^\d+-\d+$/.test(message)) announced.push(message);
    });
    await announcer.psubscribe(`${gateway.keys.prefix}:*:ch:task:*`);
    const taskId = await gateway.call('counter', { count: 100 });
    expect((await gateway.waitForEnd(taskId)).status).toBe('completed');
    expect(await gateway.outcome(taskId)).toEqual({ result: { content: [{ type: 'text', text: 'counted to 100' }] } });
    const entries = await new TaskOutbox({ redis: gateway.redis, keys: gateway.keys }).read(taskId, '0', 1000);
    expect(entries).toHaveLength(101);
    const progress = entries.filter((entry) => entry.message.type === 'progress').map((entry) => entry.message);
    expect(progress).toEqual(
      Array.from({ length: 100 }, (_, i) => ({
        type: 'progress',
        progress: i + 1,
        total: 100,
        message: `step ${i + 1}`,
      })),
    );
    // The log line sits where the handler wrote it: right after step 50.
    expect(entries[50]?.message).toEqual({ type: 'log', level: 'info', logger: 'counter', data: { half: true } });
    await until(async () => (announced.length >= 101 ? true : undefined), 2000, 'announcements');
    expect(announced).toEqual(entries.map((entry) => entry.id));
  });
});
