import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useWorkerProcesses } from './support/process-env.js';

describe('SIGTERM on a worker process', () => {
  const redis = useRedis();
  const env = useWorkerProcesses(redis);

  it('stops taking jobs, lets the running one finish, then exits 0', async () => {
    const worker = await env.start({ DRAIN_MS: '5000' });
    const gateway = env.gateway();
    const running = await gateway.call('sleeper', { ms: 800 });
    await worker.next('started', (event) => event.taskId === running);
    const exited = worker.process.stop('SIGTERM', 15_000);
    await new Promise((resolve) => setTimeout(resolve, 150));
    const queued = await gateway.call('sleeper', { ms: 10 });
    expect(await exited).toBe(0);
    expect(await gateway.read(running)).toMatchObject({ status: 'completed' });
    expect(await gateway.outcome(running)).toEqual({
      result: { content: [{ type: 'text', text: 'slept 800 ms on attempt 1' }] },
    });
    // The job enqueued during the drain was left for other workers.
    expect(await gateway.read(queued)).toMatchObject({ status: 'working' });
    expect(await (await gateway.queues.queue('tool.sleeper').getJob(queued))?.getState()).toBe('waiting');
    expect(worker.events.some((event) => event.type === 'started' && event.taskId === queued)).toBe(false);
    await gateway.store.cancel('alice', queued);
  });

  it('at the deadline aborts a handler, releases its job to the queue and exits, even if the handler ignores the abort', async () => {
    const worker = await env.start({ DRAIN_MS: '500', ABORT_GRACE_MS: '500' });
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper', { ms: 60_000, lateMs: 60_000 });
    await worker.next('started', (event) => event.taskId === taskId);
    const signalledAt = Date.now();
    const code = await worker.process.stop('SIGTERM', 15_000);
    const took = Date.now() - signalledAt;
    expect(code).toBe(0);
    expect(took).toBeGreaterThanOrEqual(1000);
    // At the deadline, not at the handler's end (60 s); loose, so that a loaded machine holds it.
    expect(took).toBeLessThan(10_000);
    expect(worker.events.find((event) => event.type === 'aborted' && event.taskId === taskId)).toMatchObject({
      kind: 'shutdown',
    });
    expect(worker.events.some((event) => event.type === 'returned' && event.taskId === taskId)).toBe(false);
    // Released, not failed: the task waits for another worker, and the release spent no attempt.
    expect(await gateway.read(taskId)).toMatchObject({
      status: 'working',
      statusMessage: 'The worker shut down; another worker will run the task again',
    });
    expect(await gateway.outcome(taskId)).toBeUndefined();
    expect(await (await gateway.queues.queue('tool.sleeper').getJob(taskId))?.getState()).toBe('waiting');

    const next = await env.start();
    expect((await next.next('started', (event) => event.taskId === taskId)).attempt).toBe(1);
    await gateway.store.cancel('alice', taskId);
    expect((await next.next('aborted', (event) => event.taskId === taskId)).kind).toBe('cancelled');
  });
});
