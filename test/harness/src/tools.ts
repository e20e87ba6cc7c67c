import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { defineTool } from '@taskgate/worker';
import { z } from 'zod';

/** Resolves after `ms`, or rejects with the abort reason when `signal` fires first. */
function wait(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
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

/** `sleep {ms}` (optional): waits, abortably, then says so; one at a time per worker, so a second one waits. */
export const sleep = defineTool({
  name: 'sleep',
  description: 'Waits for ms milliseconds',
  inputSchema: z.object({ ms: z.int().min(0).max(60_000) }),
  taskSupport: 'optional',
  concurrency: 1,
  async handler({ ms }, ctx) {
    await wait(ms, ctx.signal);
    return `slept ${ms} ms`;
  },
});

/** `echo {text}` (forbidden): the text back. */
export const echo = defineTool({
  name: 'echo',
  description: 'Returns the text',
  inputSchema: z.object({ text: z.string() }),
  taskSupport: 'forbidden',
  handler: ({ text }) => text,
});

/** `report {pages}` (required): one progress notification and status message per page. */
export const report = defineTool({
  name: 'report',
  description: 'Writes a report, page by page',
  inputSchema: z.object({ pages: z.int().min(1).max(100), msPerPage: z.int().min(0).default(10) }),
  taskSupport: 'required',
  async handler({ pages, msPerPage }, ctx) {
    for (let page = 1; page <= pages; page++) {
      await wait(msPerPage, ctx.signal);
      await ctx.progress(page, pages, `page ${page} of ${pages}`);
    }
    return { content: [{ type: 'text', text: `${pages} pages` }], structuredContent: { pages } };
  },
});

/** `chatty {steps}` (optional): progress and a log message per step, then `done`. */
export const chatty = defineTool({
  name: 'chatty',
  description: 'Reports progress and logs while it works',
  inputSchema: z.object({ steps: z.int().min(1).max(50) }),
  taskSupport: 'optional',
  async handler({ steps }, ctx) {
    for (let step = 1; step <= steps; step++) {
      await ctx.progress(step, steps, `step ${step}`);
      await ctx.log(step % 2 === 0 ? 'debug' : 'warning', { step }, 'chatty');
    }
    return 'done';
  },
});

/** `fail {message}` (optional): a tool error result (`isError: true`). */
export const fail = defineTool({
  name: 'fail',
  description: 'Fails with a tool error',
  inputSchema: z.object({ message: z.string() }),
  taskSupport: 'optional',
  handler: ({ message }) => ({ content: [{ type: 'text', text: message }], isError: true }),
});

/** `crash {code, message}` (optional): throws that JSON-RPC error. */
export const crash = defineTool({
  name: 'crash',
  description: 'Throws a JSON-RPC error',
  inputSchema: z.object({
    code: z.int().default(ErrorCode.InternalError),
    message: z.string().default('crashed on purpose'),
  }),
  taskSupport: 'optional',
  handler({ code, message }) {
    throw new ProtocolError(code, message, { hint: 'on purpose' });
  },
});

/** Every test tool. */
export const TEST_TOOLS = [sleep, echo, report, chatty, fail, crash];
