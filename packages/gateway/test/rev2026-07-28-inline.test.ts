import { ProtocolError } from '@taskgate/protocol';
import { rawCall, rawInitialize, useRedis, waitFor } from '@taskgate/test-harness';
import { defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rev2026Request, TASKS, untilStatus } from './support/rev2026-07-28.js';
import { type Stack, useStacks } from './support/stack.js';

const withTasks = { capabilities: { extensions: { [TASKS]: {} }, elicitation: {} } };
const RELATED = 'io.modelcontextprotocol/related-task';
const wait = (ms: number, signal?: AbortSignal) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });

/** Answers at once: inline within its own wait. */
const quick = defineTool({
  name: 'quick',
  description: 'Adds one',
  inputSchema: z.object({ n: z.int() }),
  taskSupport: 'optional',
  inlineWaitMs: 5000,
  handler: ({ n }) => `quick ${n + 1}`,
});

/** Sleeps longer than its wait: a task. */
const slow = defineTool({
  name: 'slow',
  description: 'Sleeps ms',
  inputSchema: z.object({ ms: z.int() }),
  taskSupport: 'optional',
  inlineWaitMs: 200,
  async handler({ ms }, ctx) {
    await wait(ms, ctx.signal);
    return `slow ${ms}`;
  },
});

const oops = defineTool({
  name: 'oops',
  description: 'A tool error',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  inlineWaitMs: 5000,
  handler: () => ({ content: [{ type: 'text', text: 'no luck' }], isError: true }),
});

const boom = defineTool({
  name: 'boom',
  description: 'A JSON-RPC error',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  inlineWaitMs: 5000,
  handler() {
    throw new ProtocolError(-32000, 'boom on purpose', { hint: 'inline' });
  },
});

/** Asks for a name: the wait ends at once with the task, input_required. */
const ask = defineTool({
  name: 'ask',
  description: 'Asks for a name',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  inlineWaitMs: 20_000,
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
      { key: 'name' },
    );
    return `Hello, ${String(answer.content?.name)}!`;
  },
});

const TOOLS = [quick, slow, oops, boom, ask];

/** The task channels this test's gateway is subscribed to (its task waiters' subscriptions). */
async function taskChannels(stack: Stack, prefix: string): Promise<string[]> {
  const channels = (await stack.redis.call('PUBSUB', 'CHANNELS', '*:ch:task:*')) as string[];
  return channels.filter((channel) => channel.includes(prefix));
}

describe('revision 2026-07-28: inline answers for fast calls', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('answers a task that ends within the tool wait with its result, and keeps the task', async () => {
    const { url } = await start({ tools: TOOLS });
    const reply = await rev2026Request(url, 'tools/call', { name: 'quick', arguments: { n: 41 } }, withTasks);
    const result = reply.body.result ?? {};
    expect(result).toMatchObject({ resultType: 'complete', content: [{ type: 'text', text: 'quick 42' }] });
    expect(result).not.toHaveProperty('taskId');
    const taskId = String((result._meta as Record<string, { taskId: string }>)[RELATED]?.taskId);
    const task = await rev2026Request(url, 'tasks/get', { taskId }, withTasks);
    expect(task.body.result).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ text: 'quick 42' }] },
    });
  });

  it('answers a slower task with the CreateTaskResult, and its result comes later', async () => {
    const { url } = await start({ tools: TOOLS });
    const reply = await rev2026Request(url, 'tools/call', { name: 'slow', arguments: { ms: 1500 } }, withTasks);
    // Answered before the task ended (its status says so, whatever the machine's load made the answer take).
    const task = reply.body.result ?? {};
    expect(task).toMatchObject({ resultType: 'task', status: 'working', taskId: expect.any(String) });
    const done = await untilStatus(url, String(task.taskId), ['completed']);
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'slow 1500' }], resultType: 'complete' });
  });

  it('answers a tool error and a JSON-RPC error inline as tasks/result would', async () => {
    const { url } = await start({ tools: TOOLS });
    const failed = await rev2026Request(url, 'tools/call', { name: 'oops', arguments: {} }, withTasks);
    expect(failed.body.result).toMatchObject({
      resultType: 'complete',
      isError: true,
      content: [{ type: 'text', text: 'no luck' }],
    });
    const crashed = await rev2026Request(url, 'tools/call', { name: 'boom', arguments: {} }, withTasks);
    expect(crashed.status).toBe(200);
    expect(crashed.body.error).toEqual({ code: -32000, message: 'boom on purpose', data: { hint: 'inline' } });
  });

  it('answers a task that asks for input with the CreateTaskResult at once (input_required)', async () => {
    const { url } = await start({ tools: TOOLS });
    const started = Date.now();
    const reply = await rev2026Request(url, 'tools/call', { name: 'ask', arguments: {} }, withTasks);
    expect(Date.now() - started).toBeLessThan(10_000);
    const task = reply.body.result ?? {};
    expect(task).toMatchObject({ resultType: 'task', status: 'input_required' });
    const taskId = String(task.taskId);
    const update = { taskId, inputResponses: { name: { action: 'accept', content: { name: 'Ada' } } } };
    expect((await rev2026Request(url, 'tasks/update', update, withTasks)).body.error).toBeUndefined();
    const done = await untilStatus(url, taskId, ['completed']);
    expect(done.result).toMatchObject({ content: [{ text: 'Hello, Ada!' }] });
  });

  it('keeps the default (0) as today and applies TASKGATE_INLINE_WAIT_MS to optional tools only', async () => {
    const today = await start();
    const before = await rev2026Request(today.url, 'tools/call', { name: 'sleep', arguments: { ms: 1 } }, withTasks);
    expect(before.body.result).toMatchObject({ resultType: 'task', status: 'working' });
    const inline = await start({ gateway: { inlineWaitMs: 2000 } });
    const fast = await rev2026Request(inline.url, 'tools/call', { name: 'sleep', arguments: { ms: 1 } }, withTasks);
    expect(fast.body.result).toMatchObject({ resultType: 'complete', content: [{ text: 'slept 1 ms' }] });
    // A required tool is always a task; a client without the extension gets a plain call, as today.
    const report = await rev2026Request(
      inline.url,
      'tools/call',
      { name: 'report', arguments: { pages: 1 } },
      withTasks,
    );
    expect(report.body.result).toMatchObject({ resultType: 'task' });
    const plain = await rev2026Request(inline.url, 'tools/call', { name: 'sleep', arguments: { ms: 1 } });
    expect(plain.body.result).toEqual({ content: [{ type: 'text', text: 'slept 1 ms' }], resultType: 'complete' });
    // 2025-11-25 is unchanged: the client asked for a task, it gets one.
    const sessionId = await rawInitialize(inline.url);
    const sessionCall = await rawCall(inline.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 1 },
      task: {},
    });
    expect((sessionCall.json() as { result: Record<string, unknown> }).result).toMatchObject({
      task: { status: 'working', taskId: expect.any(String) },
    });
  });

  it('releases the waiter and its subscription when the client goes away; the task runs on', async () => {
    const stack = await start({ gateway: { inlineWaitMs: 60_000 } });
    const gone = new AbortController();
    const request = fetch(stack.url, {
      method: 'POST',
      signal: gone.signal,
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2026-07-28',
        'Mcp-Method': 'tools/call',
        'Mcp-Name': 'sleep',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'tools/call',
        params: {
          name: 'sleep',
          arguments: { ms: 4000 },
          _meta: {
            'io.modelcontextprotocol/protocolVersion': '2026-07-28',
            'io.modelcontextprotocol/clientCapabilities': { extensions: { [TASKS]: {} } },
          },
        },
      }),
    }).catch((error: unknown) => error);
    let channels: string[] = [];
    await waitFor(async () => {
      channels = await taskChannels(stack, redis.prefix);
      return channels.length === 1;
    }, 'the inline wait to subscribe');
    const waiters = async () => (await stack.gateway.metrics.getSingleMetric('taskgate_task_waiters')?.get())?.values;
    expect((await waiters())?.[0]?.value).toBe(1);
    gone.abort();
    await request;
    await waitFor(async () => (await taskChannels(stack, redis.prefix)).length === 0, 'the subscription to go', 10_000);
    expect((await waiters())?.[0]?.value).toBe(0);
    const taskId = String(channels[0]?.split(':ch:task:')[1]);
    const running = await rev2026Request(stack.url, 'tasks/get', { taskId }, withTasks);
    expect(running.body.result).toMatchObject({ taskId, status: 'working' });
  });
});
