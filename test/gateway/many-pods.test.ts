import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Keys } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import type { RoundRobinProxy } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from './fixtures/processes.js';

// Two gateway processes and one worker process behind a proxy without stickiness: every request of a
// session may land on either pod, and nothing may depend on which one.

let pods: Pods;
let redis: Redis;
let proxy: RoundRobinProxy;
let keys: Keys;
const clients: Client[] = [];

beforeAll(async () => {
  pods = await startPods('pods', {
    TASKGATE_CURSOR_SECRET: 'many-pods-cursor-secret-0123456789',
    TASKGATE_POLL_INTERVAL_MS: '200',
    TASKGATE_PAGE_SIZE: '2',
    TASKGATE_TOOLS_PAGE_SIZE: '2',
  });
  ({ redis, proxy, keys } = pods);
}, 60_000);

afterAll(async () => {
  await pods?.stop();
}, 30_000);

afterEach(async () => {
  proxy.route = undefined;
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(): Promise<Client> {
  const client = new Client({ name: 'many-pods', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.origin}/mcp`)));
  clients.push(client);
  return client;
}

/** Sends `rpcMethod` requests to the given pods (others round robin) while `run` runs. */
async function pinned<T>(pins: Record<string, number>, run: () => Promise<T>): Promise<T> {
  proxy.route = ({ rpcMethod }) => (rpcMethod === undefined ? undefined : pins[rpcMethod]);
  try {
    return await run();
  } finally {
    proxy.route = undefined;
  }
}

/** Targets of the log entries after `from` that carry `rpcMethod`. */
const targetsOf = (from: number, rpcMethod: string): number[] =>
  proxy.log.slice(from).flatMap((entry) => (entry.rpcMethod === rpcMethod ? [entry.target] : []));

async function createTask(client: Client, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name: 'sleep', arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

async function rejection(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a rejection');
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 8000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe('many gateway pods behind a load balancer without stickiness', () => {
  it("spreads one session's requests over both pods, and every request works on either", async () => {
    const from = proxy.log.length;
    const client = await connect();
    await client.listTools();
    let result: unknown;
    const stream = client.experimental.tasks.callToolStream(
      { name: 'sleep', arguments: { ms: 300 } },
      CallToolResultSchema,
      {
        task: {},
      },
    );
    for await (const message of stream) {
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'slept 300 ms' }] });
    expect(await client.callTool({ name: 'echo', arguments: { text: 'from any pod' } })).toEqual({
      content: [{ type: 'text', text: 'from any pod' }],
    });
    const posts = proxy.log.slice(from).filter((entry) => entry.method === 'POST');
    expect(new Set(posts.map((entry) => entry.target))).toEqual(new Set([0, 1]));
    expect(targetsOf(from, 'tasks/get').length).toBeGreaterThan(0);
  });

  it('[RES-2] creates a task on pod A and blocks on its tasks/result on pod B', async () => {
    const client = await connect();
    const from = proxy.log.length;
    const { taskId, result } = await pinned({ 'tools/call': 0, 'tasks/result': 1 }, async () => {
      const id = await createTask(client, { ms: 400 });
      return { taskId: id, result: await client.experimental.tasks.getTaskResult(id, CallToolResultSchema) };
    });
    expect(result).toEqual({
      content: [{ type: 'text', text: 'slept 400 ms' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect(targetsOf(from, 'tools/call')).toEqual([0]);
    expect(targetsOf(from, 'tasks/result')).toEqual([1]);
  });

  it('[CNL-2] cancels on pod A a task that runs while its tasks/result waits on pod B', async () => {
    const client = await connect();
    const from = proxy.log.length;
    await pinned({ 'tools/call': 1, 'tasks/result': 1, 'tasks/cancel': 0, 'tasks/get': 0 }, async () => {
      const taskId = await createTask(client, { ms: 30_000 });
      await waitFor(async () => (await redis.hget(keys.task(taskId), 'startedAt')) !== null, 'the task to start');
      const waiting = rejection(client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema));
      const cancelled = await client.experimental.tasks.cancelTask(taskId);
      expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
      expect(await waiting).toEqual({
        code: -32603,
        message: 'MCP error -32603: Task was cancelled: The task was cancelled by request.',
      });
      expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    });
    expect(targetsOf(from, 'tasks/cancel')).toEqual([0]);
    expect(targetsOf(from, 'tasks/result')).toEqual([1]);
  });

  it('[LST-2][LST-4] pages through tasks and tools with each cursor redeemed on the other pod', async () => {
    const client = await connect();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(await createTask(client, { ms: 0 }));
    let turn = 0;
    proxy.route = ({ rpcMethod }) =>
      rpcMethod === 'tasks/list' || rpcMethod === 'tools/list' ? turn++ % 2 : undefined;
    const from = proxy.log.length;
    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.experimental.tasks.listTasks(cursor);
      seen.push(...page.tasks.map((task) => task.taskId));
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    expect(seen.sort()).toEqual([...ids].sort());
    expect(targetsOf(from, 'tasks/list')).toEqual([0, 1, 0]);

    turn = 0;
    const names: string[] = [];
    let toolsCursor: string | undefined;
    do {
      const page = await client.listTools(toolsCursor === undefined ? {} : { cursor: toolsCursor });
      names.push(...page.tools.map((tool) => tool.name));
      toolsCursor = page.nextCursor;
    } while (toolsCursor !== undefined);
    expect(names).toEqual(['chatty', 'crash', 'echo', 'fail', 'report', 'sleep']);
  });

  it('[NTF-1] delivers status notifications of a task created on one pod to the GET stream held by the other', async () => {
    proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 0 : rpcMethod === 'tools/call' ? 1 : undefined);
    const client = await connect();
    const statuses = new Map<string, string[]>();
    client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => {
      statuses.set(params.taskId, [...(statuses.get(params.taskId) ?? []), params.status]);
    });
    // The SDK opens its GET stream in the background after initialize: retry until a whole life was seen.
    await waitFor(async () => {
      const taskId = await createTask(client, { ms: 50 });
      await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      await new Promise((resolve) => setTimeout(resolve, 100));
      return statuses.get(taskId)?.join() === 'completed';
    }, 'the status notifications of one task');
    const gets = proxy.log.filter((entry) => entry.method === 'GET');
    expect(gets.at(-1)?.target).toBe(0);
  });

  it('cancels a direct call streaming from one pod through notifications/cancelled sent to the other', async () => {
    const client = await connect();
    const controller = new AbortController();
    await pinned({ 'tools/call': 0, 'notifications/cancelled': 1 }, async () => {
      const call = client.callTool({ name: 'sleep', arguments: { ms: 30_000 } }, CallToolResultSchema, {
        signal: controller.signal,
      });
      const direct = async (): Promise<string[]> => {
        const found: string[] = [];
        for (const key of await redis.keys(`${keys.prefix}:*:task:*`)) {
          if (key.endsWith(':outbox')) continue;
          const [kind, status, startedAt] = await redis.hmget(key, 'kind', 'status', 'startedAt');
          if (kind === 'direct' && startedAt !== null) found.push(status ?? '');
        }
        return found;
      };
      await waitFor(async () => (await direct()).includes('working'), 'the direct call to start');
      controller.abort('no longer needed');
      await expect(call).rejects.toThrow();
      await waitFor(async () => (await direct()).every((status) => status !== 'working'), 'the call to be cancelled');
      expect(await direct()).toContain('cancelled');
    });
    expect(proxy.log.filter((entry) => entry.rpcMethod === 'notifications/cancelled').map((e) => e.target)).toContain(
      1,
    );
  });
});
