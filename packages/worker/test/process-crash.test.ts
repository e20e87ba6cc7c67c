import { useRedis } from '@taskgate/test-harness';
import { Worker } from 'bullmq';
import { describe, expect, it } from 'vitest';
import { until } from './support/gateway.js';
import { useWorkerProcesses } from './support/process-env.js';
import type { WorkerProcess } from './support/worker-process.js';

const LOCK_MS = 2000;
const STALLED_MS = 1000;
/** Time for the surviving worker to fetch the recovered job and record the outcome, on a busy machine. */
const MARGIN_MS = 2000;
const BOUND_MS = LOCK_MS + STALLED_MS + MARGIN_MS;
/** Waits of the test with two kills and three processes, which asserts outcomes, not timings. */
const SLOW_BOUND_MS = 3 * BOUND_MS;
const timings = { LOCK_MS: String(LOCK_MS), STALLED_MS: String(STALLED_MS) };

/** The attempts of the task that started, in every process (the killed ones included), in attempt order. */
function starts(workers: WorkerProcess[], taskId: string): number[] {
  return workers
    .flatMap((w) => w.events)
    .flatMap((e) => (e.type === 'started' && e.taskId === taskId ? [e.attempt] : []))
    .sort((a, b) => a - b);
}

/** The process that reported starting the task (waits until one has). */
function holder(workers: WorkerProcess[], taskId: string): Promise<WorkerProcess> {
  return until(
    async () => workers.find((w) => w.events.some((e) => e.type === 'started' && e.taskId === taskId)),
    15_000,
    `a worker to start ${taskId}`,
  );
}

describe('a worker process killed with SIGKILL mid-task', () => {
  const redis = useRedis();
  const env = useWorkerProcesses(redis);
  const alive: WorkerProcess[] = [];

  it('[ERR-4][LIF-1] with attempts 1: the task becomes failed with a stored error result, not stuck working', async () => {
    alive.push(...(await Promise.all([env.start(timings), env.start(timings)])));
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper', { ms: 60_000 });
    const victim = await holder(alive, taskId);
    await victim.process.stop('SIGKILL');
    const killedAt = Date.now();
    alive.splice(alive.indexOf(victim), 1);

    const task = await gateway.waitForEnd(taskId, BOUND_MS + 5000);
    const elapsed = Date.now() - killedAt;
    const text =
      'The worker running this tool stopped unexpectedly (attempt 1 of 1); no attempts remain; a tool that may run again sets `attempts` or `retryOnCrash`';
    expect(task).toMatchObject({ status: 'failed', statusMessage: `Tool failed: ${text}` });
    expect(await gateway.outcome(taskId)).toEqual({ result: { content: [{ type: 'text', text }], isError: true } });
    expect(elapsed, `recovered ${elapsed} ms after the kill`).toBeLessThanOrEqual(BOUND_MS);
    // The tool did not run again anywhere.
    const starts = alive.flatMap((w) => w.events).filter((e) => e.type === 'started' && e.taskId === taskId);
    expect(starts).toEqual([]);
    // The job lands in BullMQ's failed set right after the task was failed.
    const queue = gateway.queues.queue('tool.sleeper');
    await until(
      async () => ((await (await queue.getJob(taskId))?.getState()) === 'failed' ? true : undefined),
      5000,
      'failed job',
    );
  });

  it('[LIF-1] with attempts 2: another worker runs attempt 2 and completes the task', async () => {
    alive.push(await env.start(timings));
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper_retry', { ms: 60_000, retryMs: 100 });
    const victim = await holder(alive, taskId);
    await victim.process.stop('SIGKILL');
    const killedAt = Date.now();
    alive.splice(alive.indexOf(victim), 1);
    const survivors = [...alive];

    const rescuer = await until(
      async () =>
        survivors.find((w) => w.events.some((e) => e.type === 'started' && e.taskId === taskId && e.attempt === 2)),
      BOUND_MS + 5000,
      'attempt 2',
    );
    const elapsed = Date.now() - killedAt;
    expect(elapsed, `attempt 2 started ${elapsed} ms after the kill`).toBeLessThanOrEqual(BOUND_MS);
    const task = await gateway.waitForEnd(taskId);
    expect(task).toMatchObject({ status: 'completed', attempt: 2 });
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'slept 100 ms on attempt 2' }] },
    });
    expect(rescuer.pid).not.toBe(victim.pid);
    await until(
      async () => ((await gateway.queues.queue('tool.sleeper_retry').getJob(taskId)) === undefined ? true : undefined),
      5000,
      'the completed job to be removed',
    );
  });

  it('[LIF-1] with retryOnCrash: another worker runs it again without spending attempts; it ran exactly twice', async () => {
    const everyone = [...alive, await env.start(timings)];
    alive.push(everyone[everyone.length - 1] as WorkerProcess);
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper_rerun', { ms: 60_000, retryMs: 100 });
    const victim = await holder(alive, taskId);
    await victim.process.stop('SIGKILL');
    const killedAt = Date.now();
    alive.splice(alive.indexOf(victim), 1);

    const task = await gateway.waitForEnd(taskId, BOUND_MS + 5000);
    const elapsed = Date.now() - killedAt;
    expect(task).toMatchObject({ status: 'completed', attempt: 2 });
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'slept 100 ms on attempt 2' }] },
    });
    expect(elapsed, `completed ${elapsed} ms after the kill`).toBeLessThanOrEqual(BOUND_MS);
    expect(starts(everyone, taskId)).toEqual([1, 2]);
    const rescuers = alive.filter((w) => w.events.some((e) => e.type === 'started' && e.taskId === taskId));
    expect(rescuers.map((w) => w.pid)).not.toContain(victim.pid);
    expect(rescuers).toHaveLength(1);
  });

  it('[LIF-1] with retryOnCrash: 1: a second crash fails the task, naming the re-runs spent', async () => {
    const everyone = [...alive, ...(await Promise.all([env.start(timings), env.start(timings)]))];
    alive.splice(0, alive.length, ...everyone);
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper_rerun_once', { ms: 60_000 });
    for (const attempt of [1, 2]) {
      const victim = await until(
        async () =>
          alive.find((w) => w.events.some((e) => e.type === 'started' && e.taskId === taskId && e.attempt === attempt)),
        SLOW_BOUND_MS,
        `attempt ${attempt}`,
      );
      await victim.process.stop('SIGKILL');
      alive.splice(alive.indexOf(victim), 1);
    }
    const task = await gateway.waitForEnd(taskId, SLOW_BOUND_MS);
    const text =
      'The worker running this tool stopped unexpectedly (attempt 2 of 2); no attempts remain after 1 re-runs allowed by `retryOnCrash`';
    expect(task).toMatchObject({ status: 'failed', statusMessage: `Tool failed: ${text}` });
    expect(await gateway.outcome(taskId)).toEqual({ result: { content: [{ type: 'text', text }], isError: true } });
    expect(starts(everyone, taskId)).toEqual([1, 2]);
  }, 60_000);

  it('[CNL-3] a cancelled task whose worker dies before it noticed stays cancelled and never runs again', async () => {
    const everyone = [...alive, await env.start(timings)];
    alive.splice(0, alive.length, ...everyone);
    const gateway = env.gateway();
    const taskId = await gateway.call('sleeper_rerun', { ms: 60_000, retryMs: 100 });
    const victim = await holder(alive, taskId);
    // Frozen first, so it can neither hear the cancel nor renew its lock; then killed.
    process.kill(victim.pid, 'SIGSTOP');
    const cancelled = await gateway.store.cancel('alice', taskId);
    expect(cancelled.status).toBe('cancelled');
    await victim.process.stop('SIGKILL');
    alive.splice(alive.indexOf(victim), 1);

    // A survivor picks the recovered job up, finds the task cancelled and completes the job without running it.
    const queue = gateway.queues.queue('tool.sleeper_rerun');
    await until(
      async () => ((await queue.getJob(taskId)) === undefined ? true : undefined),
      BOUND_MS + 5000,
      'the recovered job to complete',
    );
    expect(await gateway.read(taskId)).toMatchObject({
      status: 'cancelled',
      statusMessage: 'Cancelled by the requestor',
    });
    expect(await gateway.outcome(taskId)).toBeUndefined();
    expect(starts(everyone, taskId)).toEqual([1]);
    expect(victim.events.some((e) => e.type === 'aborted' && e.taskId === taskId)).toBe(false);
  });
});

describe('a job BullMQ handed out that no worker ran', () => {
  const redis = useRedis();
  const env = useWorkerProcesses(redis);

  it('[LIF-1] runs once when its lock lapses, as attempt 1: no execution had begun, so nothing crashed', async () => {
    const worker = await env.start(timings);
    const gateway = env.gateway();
    const entry = await gateway.entry('sleeper');
    // Frozen, so that the job is taken by a fetch nobody follows up: what a `moveToActive` that Redis ran,
    // and whose reply an outage lost, leaves behind (active, locked, run by no worker).
    process.kill(worker.pid, 'SIGSTOP');
    const taskId = await gateway.callWith(entry, { ms: 50 });
    const fetcher = new Worker(entry.queue, null, {
      connection: redis.connect({ maxRetriesPerRequest: null }),
      prefix: gateway.keys.bullPrefix(entry.queue),
      lockDuration: LOCK_MS,
      autorun: false,
    });
    const taken = await fetcher.getNextJob('nobody:1', { block: false });
    expect(taken?.id).toBe(taskId);
    await fetcher.close(true);
    const takenAt = Date.now();
    process.kill(worker.pid, 'SIGCONT');

    const task = await gateway.waitForEnd(taskId, BOUND_MS + 5000);
    expect(task).toMatchObject({ status: 'completed', attempt: 1 });
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'slept 50 ms on attempt 1' }] },
    });
    // It ran once, after the stalled checker took the job back (the lapse BullMQ counts as a stall).
    expect(starts([worker], taskId)).toEqual([1]);
    expect(Date.now() - takenAt).toBeGreaterThanOrEqual(LOCK_MS);
  });
});
