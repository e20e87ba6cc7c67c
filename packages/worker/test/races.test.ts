import { TaskStore } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../src/index.js';
import { recordTaskChannels } from './support/channel-recorder.js';
import { until } from './support/gateway.js';
import { useWorkers } from './support/in-process.js';

const RACES = 1000;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('cancel racing finish', () => {
  const redis = useRedis();
  const env = useWorkers(redis);

  it(`[LIF-1][CNL-1][CNL-3] ${RACES} races of cancel against finish end in a legal state`, async () => {
    // The tasks whose handler ran (a short first attempt's start is recorded only with its finish).
    const ran = new Set<string>();
    const quick = defineTool({
      name: 'quick',
      description: 'Finishes after a random 0-3 ms',
      inputSchema: z.object({}),
      taskSupport: 'required',
      concurrency: 16,
      async handler(_args, ctx) {
        ran.add(ctx.taskId);
        await sleep(Math.floor(Math.random() * 4));
        return `done ${ctx.taskId}`;
      },
    });
    await env.worker([quick], { statusCheckMs: 200 });
    const gateway = env.gateway({ limits: { maxActivePerOwner: 0 } });
    const channels = await recordTaskChannels(redis, gateway.keys);
    // Cancels come from other connections than the one that created the tasks, as from other gateway pods.
    const cancellers = [0, 1, 2].map(
      () =>
        new TaskStore({ redis: redis.connect(), keys: gateway.keys, cursorSecret: 'test-cursor-secret-0123456789' }),
    );
    const entry = await gateway.entry('quick');

    const race = async (i: number) => {
      const taskId = await gateway.callWith(entry, {});
      // Anywhere from before the job starts to after it finished.
      await sleep(Math.floor(Math.random() * 12));
      const canceller = cancellers[i % cancellers.length] as TaskStore;
      const cancel = await canceller.cancel('alice', taskId).then(
        (task) => ({ won: true as const, status: task.status }),
        (error: { code: number; message: string }) => ({ won: false as const, error }),
      );
      return { taskId, cancel };
    };
    // As many races at once as the worker runs jobs, so that cancels meet running executions.
    const results: Awaited<ReturnType<typeof race>>[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 16 }, async () => {
        while (next < RACES) results.push(await race(next++));
      }),
    );
    const queue = gateway.queues.queue(entry.queue);
    await until(
      async () => {
        const counts = await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized');
        return Object.values(counts).every((n) => n === 0) ? true : undefined;
      },
      60_000,
      'the queue to drain',
    );

    let cancelledWhileRunning = 0;
    let completed = 0;
    for (const { taskId, cancel } of results) {
      const task = await gateway.read(taskId);
      const outcome = await gateway.outcome(taskId);
      const snapshots = channels.of(taskId);
      if (cancel.won) {
        expect(cancel.status).toBe('cancelled');
        expect(task?.status).toBe('cancelled');
        expect(outcome).toBeUndefined();
        // Nothing changed the task after it was cancelled.
        const last = snapshots.at(-1);
        expect(last?.status).toBe('cancelled');
        expect(Number(last?.version)).toBe(task?.version);
        if (ran.has(taskId)) cancelledWhileRunning += 1;
      } else {
        expect(cancel.error).toMatchObject({
          code: -32602,
          message: "Cannot cancel task: already in terminal status 'completed'",
        });
        expect(task?.status).toBe('completed');
        expect(outcome).toEqual({ result: { content: [{ type: 'text', text: `done ${taskId}` }] } });
        completed += 1;
      }
      // Every published status sequence is a legal path of the lifecycle.
      const statuses = channels.statuses(taskId);
      expect(statuses.slice(0, -1).every((status) => status === 'working')).toBe(true);
    }
    expect(completed).toBeGreaterThan(0);
    expect(cancelledWhileRunning).toBeGreaterThan(0);
    expect(completed + results.filter((r) => r.cancel.won).length).toBe(RACES);
  }, 90_000);
});
