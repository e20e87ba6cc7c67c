import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { ToolCatalog, ToolQueues } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { connectClient, rawCall, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

const ISO = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

/** Creates a task of `name` and returns its id. */
async function createTask(client: Client, name: string, args: Record<string, unknown>, ttl?: number): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: ttl === undefined ? {} : { ttl } } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

describe('tasks', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[CRT-2][CRT-3][CRT-4][GET-1][GET-2][GET-4] answers a task-augmented call with CreateTaskResult at once, working', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 300 }, task: { ttl: 120_000 } } },
      CreateTaskResultSchema,
    );
    expect(Object.keys(created)).toEqual(['task']);
    expect(created.task).toEqual({
      taskId: expect.stringMatching(/^[A-Za-z0-9_-]{28}$/),
      status: 'working',
      ttl: 120_000,
      createdAt: expect.stringMatching(ISO),
      lastUpdatedAt: expect.stringMatching(ISO),
      pollInterval: 200,
    });
    const got = await client.experimental.tasks.getTask(created.task.taskId);
    expect(got).toMatchObject({
      taskId: created.task.taskId,
      status: 'working',
      ttl: 120_000,
      createdAt: created.task.createdAt,
    });
    expect(got.lastUpdatedAt).toMatch(ISO);
  });

  it('runs a task through callToolStream: created, polled, result', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    await client.listTools();
    const kinds: string[] = [];
    let last: unknown;
    for await (const message of client.experimental.tasks.callToolStream({ name: 'report', arguments: { pages: 3 } })) {
      kinds.push(message.type);
      last = message;
    }
    expect(kinds[0]).toBe('taskCreated');
    expect(kinds.at(-1)).toBe('result');
    expect(last).toMatchObject({
      result: { content: [{ type: 'text', text: '3 pages' }], structuredContent: { pages: 3 } },
    });
  });

  it('[RES-1][RES-3][GET-5] tasks/result of a finished task returns the exact result with the related-task _meta as JSON', async () => {
    const stack = await start();
    const { client, transport } = await connectClient(stack.url);
    const taskId = await createTask(client, 'report', { pages: 2, msPerPage: 0 });
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).status === 'completed', 'completion');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toEqual({
      content: [{ type: 'text', text: '2 pages' }],
      structuredContent: { pages: 2 },
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    const sessionId = transport.sessionId as string;
    const rawResult = await rawCall(stack.url, sessionId, 'tasks/result', { taskId });
    expect(rawResult.headers['content-type']).toMatch(/^application\/json/);
    const rawGet = await rawCall(stack.url, sessionId, 'tasks/get', { taskId });
    expect(rawGet.headers['content-type']).toMatch(/^application\/json/);
  });

  it('[RES-2] tasks/result blocks on a running task and answers over SSE once it is terminal', async () => {
    // A task running past the gateway's wait in the process gets a stream (sooner: JSON, result-wait.test.ts).
    const stack = await start({ gateway: { resultStreamAfterMs: 100 } });
    const { client, transport } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 400 });
    const started = Date.now();
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'slept 400 ms' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    // Over raw HTTP the waiting answer is an SSE stream ending with the response.
    const second = await createTask(client, 'sleep', { ms: 200 });
    const response = await rawCall(stack.url, transport.sessionId as string, 'tasks/result', { taskId: second });
    expect(response.headers['content-type']).toBe('text/event-stream');
    expect(response.events()).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: {
          content: [{ type: 'text', text: 'slept 200 ms' }],
          _meta: { [RELATED_TASK_META_KEY]: { taskId: second } },
        },
      },
    ]);
  });

  it('[RES-5] a client may drop its tasks/result stream; the task runs on and a later tasks/result answers', async () => {
    const stack = await start({ gateway: { resultStreamAfterMs: 100 } });
    const { client, transport } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 300 });
    const controller = new AbortController();
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'Mcp-Session-Id': transport.sessionId as string,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/result', params: { taskId } }),
      signal: controller.signal,
    });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    controller.abort();
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('working');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'slept 300 ms' }]);
  });

  it('[ERR-4][ERR-5] a tool error fails the task and tasks/result returns that CallToolResult', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const taskId = await createTask(client, 'fail', { message: 'disk full' });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'disk full' }],
      isError: true,
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    const task = await client.experimental.tasks.getTask(taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toEqual(expect.stringContaining('disk full'));
  });

  it('[ERR-5] a JSON-RPC error of the tool comes back from tasks/result as the same error', async () => {
    const stack = await start();
    const { client, transport } = await connectClient(stack.url);
    const taskId = await createTask(client, 'crash', { code: -32042, message: 'need a URL elicitation' });
    const error = await rejection(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
    expect(error).toEqual({ code: -32042, message: 'MCP error -32042: need a URL elicitation' });
    const raw = await rawCall(stack.url, transport.sessionId as string, 'tasks/result', { taskId });
    expect(raw.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      error: { code: -32042, message: 'need a URL elicitation', data: { hint: 'on purpose' } },
    });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
  });

  it('[CNL-2] cancels a running task: cancelled before the answer, the handler stops, tasks/result says so', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 20_000 });
    await waitFor(() => stack.worker?.active === 1, 'the task to start');
    const waiting = rejection(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({
      taskId,
      status: 'cancelled',
      statusMessage: 'The task was cancelled by request.',
    });
    expect(cancelled).not.toHaveProperty('_meta');
    expect(await waiting).toEqual({
      code: -32603,
      message: 'MCP error -32603: Task was cancelled: The task was cancelled by request.',
    });
    await waitFor(() => stack.worker?.active === 0, 'the handler to stop', 10_000);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  });

  it('[CNL-2] cancelling a task whose job has not started removes the job from the queue', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const first = await createTask(client, 'sleep', { ms: 20_000 });
    await waitFor(() => stack.worker?.active === 1, 'the first task to start');
    const second = await createTask(client, 'sleep', { ms: 1 });
    const queues = new ToolQueues({ connection: stack.redis, keys: stack.keys });
    expect(await (await queues.queue('tool.sleep').getJob(second))?.getState()).toBe('waiting');
    await client.experimental.tasks.cancelTask(second);
    expect(await queues.queue('tool.sleep').getJob(second)).toBeUndefined();
    await client.experimental.tasks.cancelTask(first);
    await queues.close();
  });

  it('[CNL-1] refuses to cancel a terminal task with -32602', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 0 });
    await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(await rejection(client.experimental.tasks.cancelTask(taskId))).toEqual({
      code: -32602,
      message: "MCP error -32602: Cannot cancel task: already in terminal status 'completed'",
    });
    const cancelled = await createTask(client, 'sleep', { ms: 20_000 });
    await client.experimental.tasks.cancelTask(cancelled);
    expect((await rejection(client.experimental.tasks.cancelTask(cancelled))).message).toBe(
      "MCP error -32602: Cannot cancel task: already in terminal status 'cancelled'",
    );
  });

  it('[ERR-1] answers unknown task ids in tasks/get, tasks/result and tasks/cancel with -32602', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const notFound = { code: -32602, message: 'MCP error -32602: Failed to retrieve task: Task not found' };
    for (const taskId of ['AAAAAAAAAAAAAAAAAAAAAAAA', 'not a task id', '']) {
      expect(await rejection(client.experimental.tasks.getTask(taskId))).toEqual(notFound);
      expect(await rejection(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema))).toEqual(notFound);
      expect(await rejection(client.experimental.tasks.cancelTask(taskId))).toEqual(notFound);
    }
  });

  it('[META-2][META-3] takes the task id from params, and adds no related-task _meta to get, list and cancel', async () => {
    const stack = await start();
    const { client, transport } = await connectClient(stack.url);
    const taskId = await createTask(client, 'sleep', { ms: 20_000 });
    const other = await createTask(client, 'sleep', { ms: 20_000 });
    const sessionId = transport.sessionId as string;
    const misleading = { [RELATED_TASK_META_KEY]: { taskId: other } };
    const get = (await rawCall(stack.url, sessionId, 'tasks/get', { taskId, _meta: misleading })).json() as {
      result: Record<string, unknown>;
    };
    expect(get.result.taskId).toBe(taskId);
    expect(get.result).not.toHaveProperty('_meta');
    const list = (await rawCall(stack.url, sessionId, 'tasks/list', {})).json() as { result: Record<string, unknown> };
    expect(list.result).not.toHaveProperty('_meta');
    const cancel = (await rawCall(stack.url, sessionId, 'tasks/cancel', { taskId, _meta: misleading })).json() as {
      result: Record<string, unknown>;
    };
    expect(cancel.result).toMatchObject({ taskId, status: 'cancelled' });
    expect(cancel.result).not.toHaveProperty('_meta');
    expect((await client.experimental.tasks.getTask(other)).status).toBe('working');
    await client.experimental.tasks.cancelTask(other);
  });

  it('[LST-1][LST-2][LST-4] lists every task exactly once across pages; [LST-3] refuses a bad cursor', async () => {
    const stack = await start({ gateway: { limits: { pageSize: 2, pollIntervalMs: 200 } } });
    const { client } = await connectClient(stack.url);
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(await createTask(client, 'sleep', { ms: 0 }));
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      expect(page.tasks.length).toBeLessThanOrEqual(2);
      for (const task of page.tasks) {
        seen.push(task.taskId);
        expect(task.createdAt).toMatch(ISO);
        // LST-4: whatever tasks/list shows, tasks/get returns.
        expect((await client.experimental.tasks.getTask(task.taskId)).taskId).toBe(task.taskId);
      }
      cursor = page.nextCursor;
      pages++;
    } while (cursor !== undefined);
    expect(pages).toBe(3);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(await rejection(client.experimental.tasks.listTasks('bogus'))).toEqual({
      code: -32602,
      message:
        'MCP error -32602: Invalid cursor: it is not a cursor this server issued. Call tasks/list without a cursor to start over.',
    });
  });

  it('[NTF-1][NTF-3] sends notifications/tasks/status with the whole task on the session GET stream', async () => {
    const stack = await start();
    const { client } = await connectClient(stack.url);
    const received: Record<string, unknown>[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, (notification) => {
      received.push(notification.params as Record<string, unknown>);
    });
    // The GET stream opens after initialized; the first task's change may race it, so run until one arrives.
    let taskId = '';
    await waitFor(async () => {
      taskId = await createTask(client, 'sleep', { ms: 0 });
      await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return received.some((p) => p.taskId === taskId && p.status === 'completed');
    }, 'status notifications');
    const mine = received.filter((p) => p.taskId === taskId);
    // A status change is notified; the creation is not (the creator has the task in its answer).
    expect(mine.map((p) => p.status)).toEqual(['completed']);
    for (const params of mine) {
      expect(params).toEqual({
        taskId,
        status: params.status,
        ttl: expect.any(Number),
        createdAt: expect.stringMatching(ISO),
        lastUpdatedAt: expect.stringMatching(ISO),
        pollInterval: 200,
      });
      expect(params).not.toHaveProperty('_meta');
    }
    // Direct calls are no tasks: they send no status notifications.
    const before = received.length;
    await client.callTool({ name: 'sleep', arguments: { ms: 0 } });
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(received.length).toBe(before);
  });

  it('[RES-2] a waiting tasks/result notices a change whose pub/sub message was lost, by its safety re-read', async () => {
    // The safety re-read of waited-for tasks is 30 s by default, one timer per gateway.
    const stack = await start({ tools: false, gateway: { waiterSafetyMs: 200 } });
    await new ToolCatalog({ redis: stack.redis, keys: stack.keys }).register([
      {
        tool: { name: 'idle', inputSchema: { type: 'object' }, execution: { taskSupport: 'required' } },
        queue: 'tool.idle',
        attempts: 1,
      },
    ]);
    const { client } = await connectClient(stack.url);
    const created = await client.request(
      { method: 'tools/call', params: { name: 'idle', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    const waiting = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await sleepMs(100);
    // Finish the task behind the broker's back: no script, so nothing is published.
    const outcome = { result: { content: [{ type: 'text', text: 'quietly done' }] } };
    await stack.redis.hset(stack.keys.task(taskId), 'status', 'completed', 'outcome', JSON.stringify(outcome));
    const started = Date.now();
    expect(await waiting).toEqual({ ...outcome.result, _meta: { [RELATED_TASK_META_KEY]: { taskId } } });
    // The safety re-read (every 200 ms here) found it: nothing else would ever wake the waiter. The bound is
    // loose on purpose, so that a loaded machine does not fail it.
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('[TTL-1] grants the requested ttl within the configured limits', async () => {
    const stack = await start({ gateway: { limits: { minTtlMs: 5000, maxTtlMs: 60_000, pollIntervalMs: 200 } } });
    const { client } = await connectClient(stack.url);
    const ttlOf = async (ttl: number | undefined) =>
      (await client.experimental.tasks.getTask(await createTask(client, 'sleep', { ms: 0 }, ttl))).ttl;
    expect(await ttlOf(10)).toBe(5000);
    expect(await ttlOf(30_000)).toBe(30_000);
    expect(await ttlOf(10_000_000)).toBe(60_000);
  });

  it('[TTL-3] enforces the per-owner limit of active tasks', async () => {
    const stack = await start({ gateway: { limits: { maxActivePerOwner: 1, pollIntervalMs: 200 } } });
    const { client } = await connectClient(stack.url);
    const first = await createTask(client, 'sleep', { ms: 20_000 });
    const refused = await rejection(createTask(client, 'sleep', { ms: 0 }));
    expect(refused.code).toBe(-32010);
    await client.experimental.tasks.cancelTask(first);
    expect(await createTask(client, 'sleep', { ms: 0 })).toMatch(/^[A-Za-z0-9_-]{28}$/);
  });
});
