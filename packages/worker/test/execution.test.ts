import { ProtocolError } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool, TaskAbortedError, toCatalogEntry } from '../src/index.js';
import { recordTaskChannels } from './support/channel-recorder.js';
import { until } from './support/gateway.js';
import { useWorkers } from './support/in-process.js';

const _simple = {
  description: 'Says which tool ran',
  inputSchema: z.object({}),
  taskSupport: 'optional' as const,
};

describe('tool execution (in-process worker, real Redis and BullMQ)', () => {
  const redis = useRedis();
  const env = useWorkers(redis);

  it('[CRT-4] completes a task with the text a handler returns', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes',
      inputSchema: z.object({ text: z.string(), times: z.int().default(2) }),
      taskSupport: 'optional',
      handler: ({ text, times }, ctx) => `${text.repeat(times)} (attempt ${ctx.attempt})`,
    });
    await env.worker([echo]);
    const gateway = env.gateway();
    const taskId = await gateway.call('echo', { text: 'ab' });
    const task = await gateway.waitForEnd(taskId);
    expect(task.status).toBe('completed');
    expect(task.attempt).toBe(1);
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'abab (attempt 1)' }] },
    });
  });

  it('[ERR-4][ERR-5] stores a thrown error as an isError result on the last attempt', async () => {
    let runs = 0;
    const boom = defineTool({
      name: 'boom',
      description: 'Throws',
      inputSchema: z.object({}),
      taskSupport: 'required',
      handler() {
        runs += 1;
        throw new Error('the disk is full');
      },
    });
    await env.worker([boom]);
    const gateway = env.gateway();
    const taskId = await gateway.call('boom', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toBe('Tool failed: the disk is full');
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'the disk is full' }], isError: true },
    });
    expect(runs).toBe(1);
  });

  it('[ERR-5] stores a thrown ProtocolError as the JSON-RPC error, without retrying', async () => {
    let runs = 0;
    const strict = defineTool({
      name: 'strict',
      description: 'Refuses',
      inputSchema: z.object({}),
      taskSupport: 'required',
      attempts: 3,
      handler() {
        runs += 1;
        throw new ProtocolError(-32602, 'No such city', { city: 'Atlantis' });
      },
    });
    await env.worker([strict]);
    const gateway = env.gateway();
    const taskId = await gateway.call('strict', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toBe('No such city');
    expect(await gateway.outcome(taskId)).toEqual({
      error: { code: -32602, message: 'No such city', data: { city: 'Atlantis' } },
    });
    expect(runs).toBe(1);
    expect(toCatalogEntry(strict).attempts).toBe(3);
  });
});

describe('retries, outcomes and skips', () => {
  const redis = useRedis();
  const env = useWorkers(redis);

  it('[LIF-1] retries a thrown error with backoff while attempts remain, then completes', async () => {
    const runs: number[] = [];
    const flaky = defineTool({
      name: 'flaky',
      description: 'Fails once',
      inputSchema: z.object({}),
      taskSupport: 'required',
      attempts: 2,
      backoffMs: 100,
      handler(_args, ctx) {
        runs.push(Date.now());
        if (ctx.attempt === 1) throw new Error('temporary outage');
        return 'ok on attempt 2';
      },
    });
    await env.worker([flaky]);
    const gateway = env.gateway();
    const channels = await recordTaskChannels(redis, gateway.keys);
    const taskId = await gateway.call('flaky', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task.status).toBe('completed');
    expect(task.attempt).toBe(2);
    expect(await gateway.outcome(taskId)).toEqual({ result: { content: [{ type: 'text', text: 'ok on attempt 2' }] } });
    expect(runs).toHaveLength(2);
    expect((runs[1] ?? 0) - (runs[0] ?? 0)).toBeGreaterThanOrEqual(90);
    // Published: the retry's status message and the completion (creation and starts change nothing visible).
    await until(async () => (channels.of(taskId).length >= 2 ? true : undefined), 2000, 'snapshots');
    expect(channels.of(taskId).map((s) => s.statusMessage)).toContain(
      'Attempt 1 of 2 failed: temporary outage; retrying',
    );
    expect(channels.statuses(taskId)).toEqual(['working', 'completed']);
  });

  it('[ERR-4] fails the task after the last of its attempts throws', async () => {
    let runs = 0;
    const broken = defineTool({
      name: 'broken',
      description: 'Always fails',
      inputSchema: z.object({}),
      taskSupport: 'required',
      attempts: 2,
      handler() {
        runs += 1;
        throw new Error(`failure ${runs}`);
      },
    });
    await env.worker([broken]);
    const gateway = env.gateway();
    const taskId = await gateway.call('broken', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task).toMatchObject({ status: 'failed', statusMessage: 'Tool failed: failure 2', attempt: 2 });
    expect(await gateway.outcome(taskId)).toEqual({
      result: { content: [{ type: 'text', text: 'failure 2' }], isError: true },
    });
    expect(runs).toBe(2);
    // The job stays in BullMQ's failed set for operators; the task holds the outcome.
    const queue = gateway.queues.queue('tool.broken');
    await until(
      async () => ((await (await queue.getJob(taskId))?.getState()) === 'failed' ? true : undefined),
      5000,
      'failed job',
    );
  });

  it('[ERR-4] fails the task when the handler returns an isError result (no retry)', async () => {
    let runs = 0;
    const result = { content: [{ type: 'text' as const, text: 'city not found' }], isError: true, extra: 1 };
    const soft = defineTool({
      name: 'soft',
      description: 'Returns an error result',
      inputSchema: z.object({}),
      taskSupport: 'required',
      attempts: 3,
      handler() {
        runs += 1;
        return result;
      },
    });
    await env.worker([soft]);
    const gateway = env.gateway();
    const taskId = await gateway.call('soft', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task).toMatchObject({ status: 'failed', statusMessage: 'Tool failed: city not found' });
    expect(await gateway.outcome(taskId)).toEqual({ result });
    expect(runs).toBe(1);
  });

  it('stores structured output with its JSON text, validated by the outputSchema', async () => {
    const weather = defineTool({
      name: 'weather',
      description: 'Structured',
      inputSchema: z.object({ city: z.string() }),
      outputSchema: z.object({ city: z.string(), celsius: z.number(), unit: z.string().default('C') }),
      taskSupport: 'optional',
      handler: ({ city }) => (city === 'bad' ? { city, celsius: 'warm' as unknown as number } : { city, celsius: 21 }),
    });
    await env.worker([weather]);
    const gateway = env.gateway();
    const good = await gateway.call('weather', { city: 'Oslo' });
    const bad = await gateway.call('weather', { city: 'bad' });
    expect((await gateway.waitForEnd(good)).status).toBe('completed');
    const structuredContent = { city: 'Oslo', celsius: 21, unit: 'C' };
    expect(await gateway.outcome(good)).toEqual({
      result: { content: [{ type: 'text', text: JSON.stringify(structuredContent) }], structuredContent },
    });
    expect((await gateway.waitForEnd(bad)).status).toBe('failed');
    expect(await gateway.outcome(bad)).toEqual({
      result: {
        content: [
          {
            type: 'text',
            text: "The tool's output does not match its outputSchema: celsius: Invalid input: expected number, received string",
          },
        ],
        isError: true,
      },
    });
  });

  it('answers invalid arguments with a tool error, not a retry', async () => {
    let runs = 0;
    const even = defineTool({
      name: 'even',
      description: 'Needs an even number',
      inputSchema: z.object({ n: z.int().refine((n) => n % 2 === 0, 'must be even') }),
      taskSupport: 'optional',
      attempts: 3,
      handler: ({ n }) => {
        runs += 1;
        return String(n);
      },
    });
    await env.worker([even]);
    const gateway = env.gateway();
    const taskId = await gateway.call('even', { n: 3 });
    expect((await gateway.waitForEnd(taskId)).status).toBe('failed');
    expect(await gateway.outcome(taskId)).toEqual({
      result: {
        content: [{ type: 'text', text: "Invalid arguments for tool 'even': n: must be even" }],
        isError: true,
      },
    });
    expect(runs).toBe(0);
  });

  it('aborts a handler that runs past its timeoutMs and fails the task', async () => {
    let reason: unknown;
    const slow = defineTool({
      name: 'slow',
      description: 'Too slow',
      inputSchema: z.object({}),
      taskSupport: 'required',
      timeoutMs: 200,
      async handler(_args, ctx) {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        reason = ctx.signal.reason;
        throw ctx.signal.reason;
      },
    });
    await env.worker([slow]);
    const gateway = env.gateway();
    const taskId = await gateway.call('slow', {});
    const task = await gateway.waitForEnd(taskId);
    expect(task).toMatchObject({
      status: 'failed',
      statusMessage: 'Tool failed: The tool did not finish within 200 ms',
    });
    expect(reason).toBeInstanceOf(TaskAbortedError);
    expect((reason as TaskAbortedError).kind).toBe('timeout');
  });

  it('[CNL-3] completes the job of an already cancelled task without running the tool', async () => {
    let runs = 0;
    const never = defineTool({
      name: 'never',
      description: 'Must not run',
      inputSchema: z.object({}),
      taskSupport: 'required',
      handler: () => {
        runs += 1;
        return 'ran';
      },
    });
    const gateway = env.gateway();
    const entry = toCatalogEntry(never);
    // Cancelled after enqueueing, before any worker exists: the job is still waiting when the worker starts.
    const cancelled = await gateway.callWith(entry, {});
    await gateway.store.cancel('alice', cancelled);
    // Gone: the task hash expired (deleted here) before its job ran.
    const gone = await gateway.callWith(entry, {});
    await gateway.redis.del(gateway.keys.task(gone));
    await env.worker([never]);
    const queue = gateway.queues.queue(entry.queue);
    await until(
      async () => ((await queue.getJobCounts('completed', 'waiting', 'active')).waiting === 0 ? true : undefined),
      5000,
      'drain',
    );
    await until(
      async () =>
        (await queue.getJob(cancelled)) === undefined && (await queue.getJob(gone)) === undefined ? true : undefined,
      5000,
      'job removal',
    );
    expect(runs).toBe(0);
    const task = await gateway.read(cancelled);
    expect(task).toMatchObject({ status: 'cancelled', version: 2 });
    expect(await gateway.outcome(cancelled)).toBeUndefined();
    expect(await gateway.read(gone)).toBeUndefined();
  });

  it('[CNL-2] removes the waiting job of a cancelled task from its queue', async () => {
    const gateway = env.gateway();
    const entry = toCatalogEntry(
      defineTool({
        name: 'queued',
        description: 'Waits',
        inputSchema: z.object({}),
        taskSupport: 'required',
        handler: () => 'x',
      }),
    );
    const taskId = await gateway.callWith(entry, {});
    const queue = gateway.queues.queue(entry.queue);
    expect(await (await queue.getJob(taskId))?.getState()).toBe('waiting');
    await gateway.store.cancel('alice', taskId);
    expect(await gateway.queues.removeWaiting(entry.queue, taskId)).toBe(true);
    expect(await queue.getJob(taskId)).toBeUndefined();
    expect(await gateway.queues.removeWaiting(entry.queue, taskId)).toBe(false);
    expect((await gateway.read(taskId))?.status).toBe('cancelled');
  });
});
