/**
 * The chaos run's tools (`taskgate worker --tools bench/chaos/tools.ts`). Each execution writes one line
 * `{"chaosExecution":"<taskId>"}` to stdout before it does anything else (a file: the write is synchronous,
 * so it survives a kill -9 right after), which is how the run counts executions per task.
 */
import { defineTool, type ToolContext } from '@taskgate/worker';
import { z } from 'zod';

const CONCURRENCY = 64;

function executed(ctx: ToolContext): void {
  process.stdout.write(`${JSON.stringify({ chaosExecution: ctx.taskId })}\n`);
}

function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });
}

/** Returns at once. */
export const chaosShort = defineTool({
  name: 'chaos_short',
  description: 'Returns "ok" at once',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  concurrency: CONCURRENCY,
  handler: (_args, ctx) => {
    executed(ctx);
    return 'ok';
  },
});

/** Waits `ms`, stops early when cancelled. */
export const chaosLong = defineTool({
  name: 'chaos_long',
  description: 'Waits for the given number of milliseconds',
  inputSchema: z.object({ ms: z.int().min(0).max(600_000) }),
  taskSupport: 'optional',
  concurrency: CONCURRENCY,
  async handler({ ms }, ctx) {
    executed(ctx);
    await pause(ms, ctx.signal);
    return `waited ${ms} ms`;
  },
});

/** Reports progress 1..steps, one step every `ms`: the client checks it receives each number exactly once. */
export const chaosProgress = defineTool({
  name: 'chaos_progress',
  description: 'Reports progress 1 to steps, one step every ms milliseconds',
  inputSchema: z.object({ steps: z.int().min(1).max(1000), ms: z.int().min(0).max(60_000) }),
  outputSchema: z.object({ steps: z.int() }),
  taskSupport: 'required',
  concurrency: CONCURRENCY,
  async handler({ steps, ms }, ctx) {
    executed(ctx);
    for (let step = 1; step <= steps; step++) {
      await pause(ms, ctx.signal);
      await ctx.progress(step, steps);
    }
    return { steps };
  },
});

/** Asks the client for a name (the task is input_required until it answers), then greets it. */
export const chaosAsk = defineTool({
  name: 'chaos_ask',
  description: 'Asks for a name through elicitation, then greets it',
  inputSchema: z.object({}),
  taskSupport: 'required',
  concurrency: CONCURRENCY,
  async handler(_args, ctx) {
    executed(ctx);
    const answer = await ctx.elicit({
      message: 'Name?',
      requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
    });
    const name = answer.action === 'accept' ? answer.content?.name : undefined;
    return typeof name === 'string' ? `Hello, ${name}!` : 'No name given.';
  },
});

export const tools = [chaosShort, chaosLong, chaosProgress, chaosAsk];
export default tools;
