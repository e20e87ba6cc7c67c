import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  McpError,
  type Progress,
  ResourceUpdatedNotificationSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { announceResourceUpdated } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { type ForkedProcess, forkNode, type RoundRobinProxy, taskPages } from '@taskgate/test-harness';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods, waitForOutput } from '../gateway/fixtures/processes.js';

// The official TypeScript SDK client (1.x) against taskgate as deployed: two gateway processes and a worker
// process (the `taskgate` CLI with the example tools and the conformance fixture) behind a proxy without stickiness. Each test is one
// row of the interop matrix: the SDK's own task API, its request handlers and callbacks, unchanged.

const root = new URL('../../', import.meta.url).pathname;
let pods: Pods;
let proxy: RoundRobinProxy;
/** The gateway behind proxy target 1, which the last test shuts down mid-stream. */
let podB: ForkedProcess;
const clients: Client[] = [];

beforeAll(async () => {
  const tools = '@taskgate/examples,@taskgate/conformance-fixture';
  pods = await startPods(
    'interop',
    {
      TASKGATE_CURSOR_SECRET: 'interop-cursor-secret-0123456789',
      TASKGATE_POLL_INTERVAL_MS: '100',
      TASKGATE_PAGE_SIZE: '2',
      TASKGATE_SSE_RETRY_MS: '100',
      // A port of its own for the worker's metrics (the default, 9464, may be another test's).
      TASKGATE_METRICS_PORT: '0',
    },
    async (env) => {
      const worker = forkNode(
        `${root}packages/cli/src/run.ts`,
        ['worker', '--tools', tools, '--log-level', 'info'],
        env,
      );
      await waitForOutput(worker, /worker ready/, 90_000);
      return worker;
    },
  );
  proxy = pods.proxy;
  podB = pods.gateways[1];
}, 90_000);

afterAll(async () => {
  await pods?.stop();
}, 30_000);

let turn = 0;
/** Round robin over the two pods (tests that pin a method to a pod use it for the rest). */
const twoPods = (): number => turn++ % 2;

afterEach(async () => {
  proxy.route = () => twoPods();
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(capabilities: Record<string, unknown> = {}): Promise<Client> {
  proxy.route ??= () => twoPods();
  const client = new Client({ name: 'interop', version: '1.0.0' }, { capabilities });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${proxy.origin}/mcp`)));
  clients.push(client);
  return client;
}

async function createTask(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

describe('interop: the official TypeScript SDK client through two gateways', () => {
  it('[GET-4][GET-6] callToolStream polls a task at its pollInterval on either pod until the result', async () => {
    const client = await connect();
    const from = proxy.log.length;
    const seen: string[] = [];
    let result: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'report', arguments: { pages: 3, msPerPage: 150 } },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === 'taskCreated') seen.push(`created:${message.task.status}`);
      if (message.type === 'taskStatus') {
        seen.push(message.task.status);
        expect(message.task.pollInterval).toBe(100);
      }
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(seen[0]).toBe('created:working');
    expect(seen.filter((status) => status === 'working').length).toBeGreaterThan(1);
    expect(seen.at(-1)).toBe('completed');
    expect(result).toMatchObject({ structuredContent: { pages: 3 } });
    const polls = proxy.log.slice(from).filter((entry) => entry.rpcMethod === 'tasks/get');
    expect(new Set(polls.map((entry) => entry.target))).toEqual(new Set([0, 1]));
  });

  it('[RES-2][RES-4] getTaskResult blocks until the task ends while tasks/get keeps answering', async () => {
    const client = await connect();
    // Long enough for a few reads on a loaded machine; the loop ends when the result arrives, not at a time.
    const taskId = await createTask(client, 'sleep', { ms: 3000 });
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    const statuses: string[] = [];
    let settled = false;
    void result.finally(() => {
      settled = true;
    });
    while (!settled) {
      statuses.push((await client.experimental.tasks.getTask(taskId)).status);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(await result).toEqual({
      content: [{ type: 'text', text: 'slept 3000 ms' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    expect(statuses.length).toBeGreaterThanOrEqual(2);
    expect(statuses[0]).toBe('working');
    expect(statuses.slice(0, -1).every((status) => status === 'working')).toBe(true);
  });

  it('[LST-2] listTasks pages through every task of the session with cursors redeemed on either pod', async () => {
    const client = await connect();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(await createTask(client, 'sleep', { ms: 0 }));
    const pages = await taskPages(client);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
    expect(pages.length).toBe(3);
    expect(pages.flat().sort()).toEqual([...ids].sort());
  });

  it('[CNL-2] cancelTask cancels a running task; the SDK stream ends with the cancellation', async () => {
    const client = await connect();
    const messages: string[] = [];
    const stream = client.experimental.tasks.callToolStream(
      { name: 'sleep', arguments: { ms: 30_000 } },
      CallToolResultSchema,
      {
        task: {},
      },
    );
    let taskId: string | undefined;
    for await (const message of stream) {
      messages.push(message.type);
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'taskStatus' && message.task.status === 'working' && taskId !== undefined) {
        const cancelled = await client.experimental.tasks.cancelTask(taskId);
        expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
      }
      if (message.type === 'error') {
        expect(message.error).toBeInstanceOf(McpError);
        expect(message.error.message).toMatch(/was cancelled/);
      }
    }
    expect(messages.at(-1)).toBe('error');
    expect((await client.experimental.tasks.getTask(taskId as string)).status).toBe('cancelled');
  });

  it('[INP-2][INP-3] answers an elicitation during a task with the SDK handler, through either pod', async () => {
    const client = await connect({ elicitation: { form: {} } });
    const metas: unknown[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      metas.push(request.params._meta?.[RELATED_TASK_META_KEY]);
      return { action: 'accept', content: { name: 'Ada' } };
    });
    let result: unknown;
    let taskId: string | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'ask_name', arguments: {} },
      CallToolResultSchema,
      {
        task: {},
      },
    )) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
    expect(metas).toEqual([{ taskId }]);
  });

  it('[INP-1][INP-4] answers a sampling request during a task with the SDK handler; the task waits in input_required', async () => {
    const client = await connect({ sampling: {} });
    let seenInputRequired: () => void = () => {};
    const inputRequired = new Promise<void>((resolve) => {
      seenInputRequired = resolve;
    });
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      // Hold the answer until the test has seen the task waiting for it.
      await inputRequired;
      const first = request.params.messages[0]?.content;
      const text = first !== undefined && !Array.isArray(first) && first.type === 'text' ? first.text : '';
      return {
        model: 'test-model',
        role: 'assistant',
        content: { type: 'text', text: `summary of ${text.length} chars` },
      };
    });
    const taskId = await createTask(client, 'summarize', { text: 'taskgate brokers MCP tasks through Redis.' });
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    let status = 'working';
    while (status !== 'input_required') {
      await new Promise((resolve) => setTimeout(resolve, 50));
      status = (await client.experimental.tasks.getTask(taskId)).status;
      expect(['working', 'input_required']).toContain(status);
    }
    seenInputRequired();
    expect((await result).content).toEqual([{ type: 'text', text: expect.stringMatching(/^summary of \d+ chars$/) }]);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
  });

  it('[PRG-1] delivers progress of a task to the SDK onprogress callback with the original token', async () => {
    const client = await connect();
    const progress: Progress[] = [];
    let result: unknown;
    // The SDK opens its GET stream after initialize; progress of a task nobody's tasks/result carries goes there.
    await new Promise((resolve) => setTimeout(resolve, 300));
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'report', arguments: { pages: 4, msPerPage: 150 } },
      CallToolResultSchema,
      { task: {}, onprogress: (p) => progress.push(p) },
    )) {
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toMatchObject({ structuredContent: { pages: 4 } });
    // The last notifications may come after the result: wait for them, not for a fixed time.
    await expect.poll(() => progress.map((p) => p.progress), { timeout: 10_000 }).toEqual([1, 2, 3, 4]);
    expect(progress.every((p) => p.total === 4)).toBe(true);
  });

  it('[NTF-1][NTF-2] status notifications reach the SDK on its GET stream, and polling alone gets the same end', async () => {
    const client = await connect();
    const notified: string[] = [];
    client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => void notified.push(params.status));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const taskId = await createTask(client, 'sleep', { ms: 200 });
    let status = 'working';
    while (status === 'working') {
      await new Promise((resolve) => setTimeout(resolve, 100));
      status = (await client.experimental.tasks.getTask(taskId)).status;
    }
    expect(status).toBe('completed');
    await expect.poll(() => notified, { timeout: 10_000 }).toContain('completed');
  });

  it('subscribes on one pod and gets resources/updated on the GET stream another pod holds', async () => {
    proxy.route = ({ method, rpcMethod }) =>
      method === 'GET'
        ? 1
        : rpcMethod === 'resources/subscribe' || rpcMethod === 'resources/unsubscribe'
          ? 0
          : twoPods();
    const client = await connect();
    const updated: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, ({ params }) => void updated.push(params.uri));
    await client.subscribeResource({ uri: 'test://watched-resource' });
    expect(await client.readResource({ uri: 'test://watched-resource' })).toEqual({
      contents: [{ uri: 'test://watched-resource', mimeType: 'text/plain', text: 'Watched resource content' }],
    });
    // What a worker's ctx.resourceUpdated() does: one PUBLISH, heard by every gateway.
    const { redis, keys } = pods;
    // Each wait for a condition has its own bound, generous for a loaded machine.
    let deadline = Date.now() + 30_000;
    while (!updated.includes('test://watched-resource') && Date.now() < deadline) {
      await announceResourceUpdated(redis, keys, 'test://watched-resource');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(updated).toContain('test://watched-resource');
    await client.unsubscribeResource({ uri: 'test://watched-resource' });
    await client.subscribeResource({ uri: 'test://template/9/data' });
    updated.length = 0;
    await announceResourceUpdated(redis, keys, 'test://watched-resource');
    // Announcements travel in order: once the marker arrives, the unsubscribed one would have too.
    deadline = Date.now() + 30_000;
    while (!updated.includes('test://template/9/data') && Date.now() < deadline) {
      await announceResourceUpdated(redis, keys, 'test://template/9/data');
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(updated).toContain('test://template/9/data');
    expect(updated.filter((uri) => uri !== 'test://template/9/data')).toEqual([]);
    expect(proxy.log.filter((entry) => entry.method === 'GET').at(-1)?.target).toBe(1);
  });
  // Last: it shuts pod 1 down for good.
  it('reconnects: a tasks/result stream whose pod shuts down resumes on another pod with Last-Event-ID', async () => {
    const client = await connect();
    const taskId = await createTask(client, 'sleep', { ms: 1500 });
    const from = proxy.log.length;
    proxy.route = ({ rpcMethod }) => (rpcMethod === 'tasks/result' ? 1 : 0);
    const result = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(proxy.log.slice(from).find((entry) => entry.rpcMethod === 'tasks/result')?.target).toBe(1);
    // A graceful shutdown ends the stream with a retry hint; the SDK resumes it with GET + Last-Event-ID.
    await podB.stop('SIGTERM', 10_000);
    expect(await result).toEqual({
      content: [{ type: 'text', text: 'slept 1500 ms' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    const resumed = proxy.log.slice(from).filter((entry) => entry.method === 'GET' && entry.target === 0);
    expect(resumed.length).toBeGreaterThan(0);
  });
});
