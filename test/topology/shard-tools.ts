/**
 * The queue-shard tests' tool (`taskgate worker --tools test/topology/shard-tools.ts`): each execution first
 * writes `{"shardExecution":"<taskId>"}` to stdout (synchronously, so it survives a kill -9 right after), which
 * is how the tests count executions per task and find the worker running one.
 */
import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Waits `ms`, stops early when cancelled; a crashed execution runs again on another worker. */
export const shardRun = defineTool({
  name: 'shard_run',
  description: 'Waits for the given number of milliseconds',
  inputSchema: z.object({ ms: z.int().min(0).max(600_000) }),
  taskSupport: 'optional',
  concurrency: 4,
  retryOnCrash: true,
  async handler({ ms }, ctx) {
    process.stdout.write(`${JSON.stringify({ shardExecution: ctx.taskId })}\n`);
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      ctx.signal.addEventListener(
        'abort',
        () => {
          clearTimeout(timer);
          reject(ctx.signal.reason);
        },
        { once: true },
      );
    });
    return `waited ${ms} ms`;
  },
});

export const tools = [shardRun];
