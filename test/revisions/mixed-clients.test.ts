import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import { CallToolResultSchema, CreateTaskResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, taskPages } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type Deployment, startDeployment } from '../topology/deployment.js';

// Clients of both protocol revisions against one deployment — two gateway processes and a worker behind a
// round-robin proxy, one Redis: the TypeScript SDK v2 client (revision 2026-07-28, stateless, the tasks
// extension) and the v1 client (2025-11-25, sessions, tasks). Each runs its task flows; one principal reads its
// tasks from both revisions.

const TASKS = 'io.modelcontextprotocol/tasks';
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';
const Loose = z.looseObject({});
type Loose = Record<string, unknown>;

async function connectV2(url: string, token: string, capabilities: Record<string, unknown>): Promise<ClientV2> {
  const transport = new TransportV2(new URL(url), { requestInit: { headers: { Authorization: `Bearer ${token}` } } });
  const client = new ClientV2(
    { name: 'mixed-v2', version: '1.0.0' },
    { capabilities, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(transport);
  return client;
}

/** Client capabilities with the tasks extension (a fresh object each time: a client may keep what it is given). */
const withTasks = (): Loose => ({ elicitation: {}, extensions: { [TASKS]: {} } });

/**
 * A `tools/call` that the server answers with a task (`resultType: "task"`), sent as a plain 2026-07-28 POST:
 * client 2.4.0 decodes only `complete` and `input_required` results of tools/call (it has no tasks extension
 * yet), so the task is created here and then driven through that client's tasks/get and tasks/update.
 */
async function createTask2026(url: string, token: string, name: string, args: Loose): Promise<Loose> {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      Authorization: `Bearer ${token}`,
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'tools/call',
      'Mcp-Name': name,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method: 'tools/call',
      params: {
        name,
        arguments: args,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': withTasks(),
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: Loose };
  expect(body.result, JSON.stringify(body)).toMatchObject({ resultType: 'task', status: 'working' });
  return body.result as Loose;
}

/** `tasks/get` through the v2 client until the task is in one of `statuses`. */
async function untilV2(client: ClientV2, taskId: string, statuses: readonly string[]): Promise<Loose> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const task = (await client.request({ method: 'tasks/get', params: { taskId } }, Loose)) as Loose;
    if (statuses.includes(String(task.status))) return task;
    if (Date.now() > deadline) throw new Error(`task ${taskId} stayed ${String(task.status)}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('clients of both revisions on one deployment', () => {
  let deployment: Deployment;
  let url: string;

  beforeAll(async () => {
    deployment = await startDeployment('single', {
      TASKGATE_AUTH: 'tokens',
      TASKGATE_TOKENS: `${ALICE}=alice,${BOB}=bob`,
    });
    url = `${deployment.proxy.origin}/mcp`;
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
  }, 30_000);

  it('runs the v2 client on revision 2026-07-28: plain calls, input in rounds, tasks to their result', async () => {
    const plain = await connectV2(url, ALICE, { sampling: {} });
    expect(plain.getServerCapabilities()?.extensions).toHaveProperty([TASKS]);
    plain.setRequestHandler('sampling/createMessage', async () => ({
      model: 'test-model',
      role: 'assistant' as const,
      content: { type: 'text' as const, text: 'A short summary.' },
    }));
    const echo = await plain.callTool({ name: 'echo', arguments: { text: 'both wires' } });
    expect(echo.content).toEqual([{ type: 'text', text: 'both wires' }]);
    // Without the tasks extension an optional tool runs as a call; its sampling request is a round of input.
    const summary = await plain.callTool({ name: 'summarize', arguments: { text: 'Redis holds every task.' } });
    expect(summary.content).toEqual([{ type: 'text', text: 'A short summary.' }]);
    const slept = await plain.callTool({ name: 'sleep', arguments: { ms: 20 } });
    expect(slept.content).toEqual([{ type: 'text', text: 'slept 20 ms' }]);
    await plain.close();

    const client = await connectV2(url, ALICE, withTasks());
    const created = await createTask2026(url, ALICE, 'sleep', { ms: 100 });
    expect(created).toMatchObject({ ttlMs: expect.any(Number) });
    const done = await untilV2(client, String(created.taskId), ['completed']);
    expect(done.result).toMatchObject({ content: [{ type: 'text', text: 'slept 100 ms' }] });
    const asking = await createTask2026(url, ALICE, 'ask_name', {});
    const taskId = String(asking.taskId);
    const waiting = await untilV2(client, taskId, ['input_required']);
    const [key] = Object.keys(waiting.inputRequests as Loose);
    expect((waiting.inputRequests as Record<string, Loose>)[String(key)]).toMatchObject({
      method: 'elicitation/create',
    });
    const answer = { [String(key)]: { action: 'accept', content: { name: 'Ada' } } };
    await client.request({ method: 'tasks/update', params: { taskId, inputResponses: answer } }, Loose);
    const greeted = await untilV2(client, taskId, ['completed']);
    expect(greeted.result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
    const cancelling = await createTask2026(url, ALICE, 'sleep', { ms: 60_000 });
    // The acknowledgement is empty (the client strips `resultType: "complete"`); the next tasks/get shows it.
    const ack = await client.request({ method: 'tasks/cancel', params: { taskId: String(cancelling.taskId) } }, Loose);
    expect(ack).toEqual({});
    expect((await untilV2(client, String(cancelling.taskId), ['cancelled'])).status).toBe('cancelled');
    await client.close();
  });

  it('runs the v1 client on revision 2025-11-25: a task to its result, a task that asks for input', async () => {
    const { client } = await connectClient(url, { token: ALICE, capabilities: { elicitation: {} } });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Grace' } }));
    const created = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 50 }, task: {} } },
      CreateTaskResultSchema,
    );
    const result = await client.request(
      { method: 'tasks/result', params: { taskId: created.task.taskId } },
      CallToolResultSchema,
    );
    expect(result.content).toEqual([{ type: 'text', text: 'slept 50 ms' }]);
    const asking = await client.request(
      { method: 'tools/call', params: { name: 'ask_name', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const greeted = await client.request(
      { method: 'tasks/result', params: { taskId: asking.task.taskId } },
      CallToolResultSchema,
    );
    expect(greeted.content).toEqual([{ type: 'text', text: 'Hello, Grace!' }]);
  });

  it("reads one principal's tasks from both revisions, and not another principal's", async () => {
    const v2 = await connectV2(url, ALICE, withTasks());
    const { client: v1 } = await connectClient(url, { token: ALICE });
    const fromV2 = await createTask2026(url, ALICE, 'sleep', { ms: 10 });
    const fromV1 = await v1.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 10 }, task: {} } },
      CreateTaskResultSchema,
    );
    // The 2026 client reads the 2025 task with its result inlined; the 2025 client reads the 2026 task's result.
    const oldTask = await untilV2(v2, fromV1.task.taskId, ['completed']);
    expect(oldTask.result).toMatchObject({ content: [{ type: 'text', text: 'slept 10 ms' }] });
    const newResult = await v1.request(
      { method: 'tasks/result', params: { taskId: String(fromV2.taskId) } },
      CallToolResultSchema,
    );
    expect(newResult.content).toEqual([{ type: 'text', text: 'slept 10 ms' }]);
    // Its tasks/list pages hold both.
    const listed = (await taskPages(v1)).flat();
    expect(listed).toEqual(expect.arrayContaining([String(fromV2.taskId), fromV1.task.taskId]));
    // Bob sees neither.
    const bob = await connectV2(url, BOB, withTasks());
    await expect(
      bob.request({ method: 'tasks/get', params: { taskId: String(fromV2.taskId) } }, Loose),
    ).rejects.toMatchObject({
      code: -32602,
    });
    const { client: bobV1 } = await connectClient(url, { token: BOB });
    await expect(
      bobV1.request({ method: 'tasks/get', params: { taskId: fromV1.task.taskId } }, Loose),
    ).rejects.toMatchObject({ code: -32602 });
    await Promise.all([v2.close(), bob.close()]);
  });
});
