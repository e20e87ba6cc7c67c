import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Waits `ms` milliseconds; stops early when the task is cancelled. */
export const sleep = defineTool({
  name: 'sleep',
  title: 'Sleep',
  description: 'Waits for the given number of milliseconds, then says so. Cancelling the task stops the wait.',
  inputSchema: z.object({ ms: z.int().min(0).max(3_600_000).describe('How long to wait, in milliseconds') }),
  taskSupport: 'optional',
  concurrency: 50,
  annotations: { readOnlyHint: true, idempotentHint: true, openWorldHint: false },
  async handler({ ms }, ctx) {
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
    return `slept ${ms} ms`;
  },
});
