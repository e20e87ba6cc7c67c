import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalog, ToolQueues } from '@taskgate/core';
import { connectClient, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { sleep } from '@taskgate/test-harness/tools';
import { createWorker, defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Stack, useStacks } from './support/stack.js';

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

/** The hidden records of direct calls in Redis, with their status. */
async function directRecords(stack: Stack): Promise<{ taskId: string; status: string }[]> {
  const keys = await stack.redis.keys(`${stack.keys.prefix}:*:task:*`);
  const records = [];
  for (const key of keys.filter((k) => !k.endsWith(':outbox'))) {
    const [kind, status] = await stack.redis.hmget(key, 'kind', 'status');
    if (kind === 'direct') records.push({ taskId: key.split(':').at(-1) as string, status: status as string });
  }
  return records;
}

describe('tools', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[TOOL-1] lists the live tools with execution.taskSupport, a page at a time', async () => {
    const stack = await start({ gateway: { toolsPageSize: 2 } });
    const { client } = await connectClient(stack.url);
    const names: string[] = [];
    const support: Record<string, string | undefined> = {};
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor });
      expect(page.tools.length).toBeLessThanOrEqual(2);
      for (const tool of page.tools) {
        names.push(tool.name);
        support[tool.name] = tool.execution?.taskSupport;
        expect(tool.inputSchema.type).toBe('object');
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(names).toEqual(['chatty', 'crash', 'echo', 'fail', 'report', 'sleep']);
    expect(pages).toBe(3);
    expect(support).toEqual({
      chatty: 'optional',
      crash: 'optional',
      echo: 'forbidden',
      fail: 'optional',
      report: 'required',
      sleep: 'optional',
    });
    const bad = await rejection(client.listTools({ cursor: 'not-a-cursor' }));
    expect(bad).toEqual({
      code: -32602,
      message:
        'MCP error -32602: Invalid cursor: it is not a tools/list cursor this server issued, or it expired. ' +
        'Call tools/list without a cursor to start over.',
    });
  });

  it('[TOOL-3] refuses a task-augmented call of a forbidden tool, or one without taskSupport, with -32601', async () => {
    const stack = await start();
    await new ToolCatalog({ redis: stack.redis, keys: stack.keys }).register([
      { tool: { name: 'legacy', inputSchema: { type: 'object' } }, queue: 'tool.legacy', attempts: 1 },
    ]);
    const { client } = await connectClient(stack.url);
    for (const name of ['echo', 'legacy']) {
      const refused = await rejection(
        client.request(
          { method: 'tools/call', params: { name, arguments: { text: 'x' }, task: {} } },
          CreateTaskResultSchema,
        ),
      );
      expect(refused, name).toEqual({
        code: -32601,
        message: `MCP error -32601: Tool '${name}' does not support task-augmented calls (taskSupport is 'forbidden'); call it without 'task'`,
      });
    }
    expect((await client.experimental.tasks.listTasks()).tasks).toEqual([]);
  });

  it('[TOOL-5] refuses a plain call of a required tool with -32601', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const refused = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'report', arguments: { pages: 1 } } },
        CallToolResultSchema,
      ),
    );
    expect(refused).toEqual({
      code: -32601,
      message:
        "MCP error -32601: Task augmentation required for tools/call requests: tool 'report' has taskSupport 'required'; add 'task' to the params",
    });
  });

  it('[TOOL-4] runs an optional tool either as a task or as a plain call', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const plain = await client.callTool({ name: 'sleep', arguments: { ms: 1 } });
    expect(plain).toEqual({ content: [{ type: 'text', text: 'slept 1 ms' }] });
    const created = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1 }, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'slept 1 ms' }]);
    // The plain call's hidden record is not a task anybody can list.
    expect((await client.experimental.tasks.listTasks()).tasks.map((t) => t.taskId)).toEqual([created.task.taskId]);
    expect(await directRecords(stack)).toEqual([expect.objectContaining({ status: 'completed' })]);
  });

  it('takes a tool from memory between calls, and a re-registration the workers announce replaces it at once', async () => {
    // A cache far longer than the test: only the announcement on the tools channel can explain the change.
    const stack = await start({ tools: false, gateway: { toolCacheMs: 600_000 } });
    const catalog = new ToolCatalog({ redis: stack.redis, keys: stack.keys });
    const register = (type: 'integer' | 'string') =>
      catalog.register([
        {
          tool: {
            name: 'shape',
            inputSchema: { type: 'object', properties: { x: { type } }, required: ['x'] },
            execution: { taskSupport: 'optional' },
          },
          queue: 'tool.shape',
          attempts: 1,
        },
      ]);
    await register('integer');
    const { client } = await connectClient(stack.url);
    const call = () =>
      client.request(
        { method: 'tools/call', params: { name: 'shape', arguments: { x: 'text' }, task: {} } },
        CreateTaskResultSchema,
      );
    expect(await rejection(call())).toEqual({
      code: -32602,
      message: "MCP error -32602: Invalid arguments for tool 'shape': arguments/x must be integer",
    });
    await register('string');
    await waitFor(
      async () =>
        await call().then(
          () => true,
          () => false,
        ),
      'the new schema',
    );
    expect(await stack.redis.keys(`${stack.keys.prefix}:*:task:*`)).toHaveLength(1);
  });

  it('answers an unknown tool with -32602, and checks arguments before creating anything', async () => {
    const stack = await start({ tools: false });
    await new ToolCatalog({ redis: stack.redis, keys: stack.keys }).register([
      {
        tool: {
          name: 'sleep',
          inputSchema: sleep.inputJsonSchema,
          execution: { taskSupport: 'optional' },
        },
        queue: 'tool.sleep',
        attempts: 1,
      },
    ]);
    const { client } = await connectClient(stack.url);
    expect(
      await rejection(
        client.request({ method: 'tools/call', params: { name: 'nope', task: {} } }, CreateTaskResultSchema),
      ),
    ).toEqual({
      code: -32602,
      message: "MCP error -32602: Unknown tool: 'nope'. Call tools/list to see the available tools.",
    });

    const asTask = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 'soon', extra: 1 }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(asTask.code).toBe(-32602);
    expect(asTask.message).toBe("MCP error -32602: Invalid arguments for tool 'sleep': arguments/ms must be integer");
    const tooBig = await rejection(
      client.request(
        { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 10_000_000 }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(tooBig.message).toBe("MCP error -32602: Invalid arguments for tool 'sleep': arguments/ms must be <= 60000");

    // 2025-11-25: for a plain call, bad arguments are a tool execution error the model can read.
    const plain = await client.callTool({ name: 'sleep', arguments: {} });
    expect(plain).toEqual({
      content: [
        { type: 'text', text: "Invalid arguments for tool 'sleep': arguments must have required property 'ms'" },
      ],
      isError: true,
    });
    expect(await stack.redis.keys(`${stack.keys.prefix}:*:task:*`)).toEqual([]);
    const queues = new ToolQueues({ connection: stack.redis, keys: stack.keys });
    expect(await queues.queue('tool.sleep').count()).toBe(0);
    await queues.close();
  });

  it('streams a plain call: progress with the request token, log messages at the session level, then the result', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const logs: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
      logs.push(notification.params);
    });
    await client.setLoggingLevel('warning');
    const progress: unknown[] = [];
    const result = await client.callTool({ name: 'chatty', arguments: { steps: 4 } }, CallToolResultSchema, {
      onprogress: (update) => progress.push(update),
    });
    expect(result).toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(progress).toEqual([1, 2, 3, 4].map((step) => ({ progress: step, total: 4, message: `step ${step}` })));
    // Only the odd steps log at `warning`; the `debug` ones are below the session's level.
    expect(logs).toEqual([
      { level: 'warning', logger: 'chatty', data: { step: 1 } },
      { level: 'warning', logger: 'chatty', data: { step: 3 } },
    ]);
  });

  it('answers a plain call of a forbidden tool, and of a tool that throws a JSON-RPC error', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hello' } })).toEqual({
      content: [{ type: 'text', text: 'hello' }],
    });
    const crashed = await rejection(client.callTool({ name: 'crash', arguments: { code: -32000, message: 'boom' } }));
    expect(crashed).toEqual({ code: -32000, message: 'MCP error -32000: boom' });
    expect(await client.callTool({ name: 'fail', arguments: { message: 'nope' } })).toEqual({
      content: [{ type: 'text', text: 'nope' }],
      isError: true,
    });
  });

  it('cancels a plain call on notifications/cancelled for its request id', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const controller = new AbortController();
    const call = client.callTool({ name: 'sleep', arguments: { ms: 20_000 } }, CallToolResultSchema, {
      signal: controller.signal,
    });
    await waitFor(() => stack.worker?.active === 1, 'the call to start');
    controller.abort('changed my mind');
    await expect(call).rejects.toThrow();
    await waitFor(async () => (await directRecords(stack))[0]?.status === 'cancelled', 'the call to be cancelled');
    await waitFor(() => stack.worker?.active === 0, 'the handler to stop', 10_000);
  });

  it('cancels a plain call when the client closes its stream, after the grace period', async () => {
    const stack = await start({ gateway: { directCallCancelGraceMs: 200 } });
    const { transport } = await connectClient(stack.url);
    const sessionId = transport.sessionId as string;
    const controller = new AbortController();
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
      },
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'c1',
        method: 'tools/call',
        params: { name: 'sleep', arguments: { ms: 20_000 } },
      }),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    await waitFor(() => stack.worker?.active === 1, 'the call to start');
    controller.abort();
    await sleepMs(100);
    expect((await directRecords(stack))[0]?.status).toBe('working');
    await waitFor(async () => (await directRecords(stack))[0]?.status === 'cancelled', 'the grace period to end');
    await waitFor(() => stack.worker?.active === 0, 'the handler to stop', 10_000);
  });

  it('fails a task whose job cannot be enqueued, with a statusMessage, instead of leaving it working', async () => {
    const stack = await start({ tools: false });
    await new ToolCatalog({ redis: stack.redis, keys: stack.keys }).register([
      {
        tool: { name: 'broken', inputSchema: { type: 'object' }, execution: { taskSupport: 'optional' } },
        // BullMQ refuses ':' in queue names, so every enqueue fails.
        queue: 'bad:queue',
        attempts: 1,
      },
    ]);
    const { client } = await connectClient(stack.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'broken', task: {} } },
      CreateTaskResultSchema,
    );
    expect(created.task).toMatchObject({
      status: 'failed',
      statusMessage: 'The task could not be queued for a worker; try again later.',
    });
    const result = await rejection(client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema));
    expect(result).toEqual({
      code: -32603,
      message: 'MCP error -32603: The task could not be queued for a worker; try again later.',
    });
    const plain = await rejection(client.callTool({ name: 'broken', arguments: {} }));
    expect(plain).toEqual({
      code: -32603,
      message: 'MCP error -32603: The call could not be queued for a worker; try again later.',
    });
    expect((await directRecords(stack)).map((r) => r.status)).toEqual(['failed']);
  });

  it('sends notifications/tools/list_changed on the GET stream when a worker registers tools', async () => {
    const stack = await start({ tools: false });
    const { client } = await connectClient(stack.url);
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changes++;
    });
    // Wait for the GET stream's subscriptions: a tools/list round trip is not enough, so retry registrations.
    const extra = defineTool({
      name: 'late',
      description: 'A tool that appears later',
      inputSchema: z.object({}),
      taskSupport: 'optional',
      handler: () => 'late',
    });
    await waitFor(async () => {
      const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: [extra] });
      await worker.ready;
      await worker.close({ deadlineMs: 100 });
      await sleepMs(50);
      return changes > 0;
    }, 'a list_changed notification');
    expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['late']);
  });
});
