import { CallToolResultSchema, ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, raw, rawCall, rawInitialize, taskPages } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Deployment, startDeployment, TOPOLOGIES } from './deployment.js';

// The task flows across two gateway processes and a worker process, on each Redis topology taskgate supports:
// one server, a Redis Cluster of three masters and three replicas, and a master with a replica behind three
// sentinels. The same tests run on each.

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; params?: Record<string, unknown> };

/** The JSON-RPC messages of an answer: an SSE body's events, or the one JSON body. */
const messagesOf = (response: Awaited<ReturnType<typeof raw>>): Message[] =>
  (response.events().length > 0 ? response.events() : [response.json()]) as Message[];

/** The `id:` lines of an SSE body, in order. */
const eventIds = (text: string): string[] =>
  text.split('\n').flatMap((line) => (line.startsWith('id: ') ? [line.slice(4)] : []));

async function createTask(url: string, sessionId: string, name: string, args: Record<string, unknown>, meta = {}) {
  const created = messagesOf(
    await rawCall(url, sessionId, 'tools/call', { name, arguments: args, task: {}, _meta: meta }),
  );
  const task = created[0]?.result?.task as { taskId: string; status: string } | undefined;
  expect(task?.status, JSON.stringify(created)).toBe('working');
  return (task as { taskId: string }).taskId;
}

describe.each(TOPOLOGIES)('task flows on Redis topology %s', (topology) => {
  let deployment: Deployment;
  let a: string;
  let b: string;

  beforeAll(async () => {
    deployment = await startDeployment(topology);
    [a, b] = deployment.gateways;
  }, 120_000);

  afterAll(async () => {
    await deployment?.stop();
  }, 30_000);

  it('creates a task on one gateway and answers tasks/result on the other', async () => {
    const sessionId = await rawInitialize(a);
    const taskId = await createTask(a, sessionId, 'sleep', { ms: 200 });
    const result = messagesOf(await rawCall(b, sessionId, 'tasks/result', { taskId }));
    expect(result.at(-1)?.result).toMatchObject({ content: [{ type: 'text', text: 'slept 200 ms' }] });
    const got = messagesOf(await rawCall(a, sessionId, 'tasks/get', { taskId }));
    expect(got[0]?.result).toMatchObject({ taskId, status: 'completed' });
  });

  it('cancels a running task through the other gateway; both then report it cancelled', async () => {
    const sessionId = await rawInitialize(a);
    const taskId = await createTask(a, sessionId, 'sleep', { ms: 60_000 });
    const cancelled = messagesOf(await rawCall(b, sessionId, 'tasks/cancel', { taskId }));
    expect(cancelled[0]?.result).toMatchObject({ taskId, status: 'cancelled' });
    const got = messagesOf(await rawCall(a, sessionId, 'tasks/get', { taskId }));
    expect(got[0]?.result).toMatchObject({ taskId, status: 'cancelled' });
  });

  it('lists every task of the session, page by page across both gateways', async () => {
    const { client } = await connectClient(`${deployment.proxy.origin}/mcp`);
    const ids: string[] = [];
    for (const text of ['one', 'two', 'three']) {
      const created = await client.experimental.tasks.callToolStream(
        { name: 'sleep', arguments: { ms: text.length } },
        CallToolResultSchema,
        { task: {} },
      );
      for await (const message of created) {
        if (message.type === 'taskCreated') ids.push(message.task.taskId);
        if (message.type === 'error') throw message.error;
      }
    }
    const pages = await taskPages(client);
    expect(pages.length).toBeGreaterThanOrEqual(2);
    expect(pages.flat().sort()).toEqual([...ids].sort());
  });

  it('relays an elicitation of a task to the client and the answer back to the worker (input_required)', async () => {
    const { client } = await connectClient(`${deployment.proxy.origin}/mcp`, {
      capabilities: { elicitation: { form: {} } },
    });
    client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { name: 'Ada' } }));
    let result: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'ask_name', arguments: {} },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'Hello, Ada!' }] });
  });

  it('resumes a cut tasks/result stream on the other gateway: every progress once, then the result', async () => {
    const sessionId = await rawInitialize(a);
    const taskId = await createTask(a, sessionId, 'report', { pages: 4, msPerPage: 250 }, { progressToken: 'p' });
    const controller = new AbortController();
    const response = await fetch(a, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
      signal: controller.signal,
    });
    const reader = response.body?.getReader() as ReadableStreamDefaultReader<Uint8Array>;
    let before = '';
    // Read until the first progress notification went out, then drop the connection.
    while (!/"method":"notifications\/progress"/.test(before)) {
      const { value, done } = await reader.read();
      if (done) break;
      before += new TextDecoder().decode(value);
    }
    controller.abort();
    const lastId = eventIds(before).at(-1) as string;
    const resumed = await raw(b, {
      method: 'GET',
      headers: {
        Accept: 'text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
        'Mcp-Session-Id': sessionId,
        'Last-Event-ID': lastId,
      },
    });
    expect(resumed.status).toBe(200);
    const progressOf = (messages: Message[]) =>
      messages
        .filter((message) => message.method === 'notifications/progress')
        .map((message) => message.params?.progress);
    const firstPart = before
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line.length > 6)
      .map((line) => JSON.parse(line.slice(6)) as Message);
    const secondPart = resumed.events() as Message[];
    expect([...progressOf(firstPart), ...progressOf(secondPart)]).toEqual([1, 2, 3, 4]);
    expect(secondPart.at(-1)).toMatchObject({ id: 7, result: { structuredContent: { pages: 4 } } });
  });
});
