/**
 * The partition run's tools (`taskgate worker --tools bench/chaos/partitions/tools.ts`). Each returns a text
 * computable from its arguments (`echo <value>`), so the checker knows the one right result of every task, and
 * writes `{"chaosExecution":"<taskId>"}` to its log before anything else (executions counted per task).
 * `part_echo` may run again after a crash (`retryOnCrash: true`: 3 re-runs); `part_once` never runs twice.
 * `part_ask` (for 2026-07-28 clients) first asks for a word, then returns `echo <value> <word>`; it may run again.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { defineTool, type ToolContext } from '@taskgate/worker';
import { z } from 'zod';

const CONCURRENCY = 64;
/** The re-runs after crashes `retryOnCrash: true` allows (docs/guide/worker-crashes.md). */
export const ECHO_CRASH_RERUNS = 3;
/** Executions each tool's policy allows per task: attempts (1) plus re-runs after crashes. */
export const ALLOWED_EXECUTIONS: Readonly<Record<string, number>> = {
  part_echo: 1 + ECHO_CRASH_RERUNS,
  part_once: 1,
  part_ask: 1 + ECHO_CRASH_RERUNS,
};

/** The key of `part_ask`'s question, and the word every client answers with. */
export const ANSWER_KEY = 'word';
export const ANSWER_WORD = 'ok';

/** The text the tools return for `value`. */
export const echoOf = (value: number): string => `echo ${value}`;

const input = z.object({ value: z.int().min(0), ms: z.int().min(0).max(60_000) });

async function echo({ value, ms }: z.infer<typeof input>, ctx: ToolContext): Promise<string> {
  process.stdout.write(`${JSON.stringify({ chaosExecution: ctx.taskId })}\n`);
  await sleep(ms, undefined, { signal: ctx.signal });
  return echoOf(value);
}

export const partEcho = defineTool({
  name: 'part_echo',
  description: 'Waits ms milliseconds, then returns "echo <value>"; runs again after a worker crash',
  inputSchema: input,
  taskSupport: 'required',
  concurrency: CONCURRENCY,
  retryOnCrash: true,
  handler: echo,
});

export const partOnce = defineTool({
  name: 'part_once',
  description: 'Waits ms milliseconds, then returns "echo <value>"; never runs twice',
  inputSchema: input,
  taskSupport: 'required',
  concurrency: CONCURRENCY,
  handler: echo,
});

export const partAsk = defineTool({
  name: 'part_ask',
  description: 'Asks for a word, waits ms milliseconds, then returns "echo <value> <word>"; runs again after a crash',
  inputSchema: input,
  taskSupport: 'required',
  concurrency: CONCURRENCY,
  retryOnCrash: true,
  async handler({ value, ms }, ctx) {
    process.stdout.write(`${JSON.stringify({ chaosExecution: ctx.taskId })}\n`);
    const answer = await ctx.elicit(
      { message: 'Word?', requestedSchema: { type: 'object', properties: { [ANSWER_KEY]: { type: 'string' } } } },
      { key: ANSWER_KEY },
    );
    await sleep(ms, undefined, { signal: ctx.signal });
    return `${echoOf(value)} ${String(answer.content?.[ANSWER_KEY])}`;
  },
});

export const tools = [partEcho, partOnce, partAsk];
export default tools;
