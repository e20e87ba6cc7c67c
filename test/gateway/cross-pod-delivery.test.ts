import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  LoggingMessageNotificationSchema,
  TaskStatusNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Keys } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import type { RoundRobinProxy } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forkWorker, type Pods, startPods } from './fixtures/processes.js';
import { RawSse } from './fixtures/raw-sse.js';

// Two gateway processes and one worker process behind a proxy without stickiness. Server-to-client requests,
// progress and log messages travel worker → Redis → whichever gateway holds the stream the client reads;
// answers come back through whichever gateway receives them; streams resume on either pod.

let pods: Pods;
let redis: Redis;
let proxy: RoundRobinProxy;
let keys: Keys;
const clients: Client[] = [];
const raws: RawSse[] = [];
const RETRY_MS = 100;

beforeAll(async () => {
  pods = await startPods(
    'deliver',
    {
      TASKGATE_CURSOR_SECRET: 'cross-pod-delivery-cursor-secret-0123',
      TASKGATE_POLL_INTERVAL_MS: '200',
      TASKGATE_SSE_HEARTBEAT_MS: '300',
      TASKGATE_SSE_RETRY_MS: String(RETRY_MS),
    },
    (env) => forkWorker({ ...env, TEST_WORKER_TOOLS: 'delivery' }),
  );
  ({ redis, proxy, keys } = pods);
}, 60_000);

afterAll(async () => {
  await pods?.stop();
}, 30_000);

afterEach(async () => {
  proxy.route = undefined;
  await Promise.all(raws.splice(0).map((raw) => raw.kill()));
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

const endpoint = (): string => `${proxy.origin}/mcp`;

/** An SDK client with elicitation and sampling capabilities, connected through the proxy. */
async function connect(): Promise<{ client: Client; sessionId: string }> {
  const client = new Client(
    { name: 'cross-pod', version: '1.0.0' },
    { capabilities: { elicitation: {}, sampling: {} } },
  );
  const transport = new StreamableHTTPClientTransport(new URL(endpoint()));
  await client.connect(transport);
  clients.push(client);
  return { client, sessionId: transport.sessionId as string };
}

const headers = (sessionId?: string, extra: Record<string, string> = {}): Record<string, string> => ({
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-11-25',
  ...(sessionId !== undefined && { 'Mcp-Session-Id': sessionId }),
  ...extra,
});

/** A session opened over raw HTTP (no GET stream unless the test opens one); returns its id. */
async function rawSession(capabilities: Record<string, unknown> = {}): Promise<string> {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: headers(),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  await response.text();
  return response.headers.get('mcp-session-id') as string;
}

/** One JSON-RPC request over raw HTTP, answered as JSON. */
async function rawRequest(sessionId: string, method: string, params: unknown, id: number | string = 1) {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: headers(sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id, method, params }),
  });
  return (await response.json()) as { result?: Record<string, unknown>; error?: unknown };
}

/** Posts the client's JSON-RPC response to a server-to-client request; returns the HTTP status. */
async function rawAnswer(sessionId: string, id: unknown, result: Record<string, unknown>): Promise<number> {
  const response = await fetch(endpoint(), {
    method: 'POST',
    headers: headers(sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id, result }),
  });
  await response.text();
  return response.status;
}

/** Opens an SSE response: a POST of `message`, or a GET (with `lastEventId`, a resumption). */
async function openSse(sessionId: string, message?: unknown, lastEventId?: string): Promise<RawSse> {
  const raw = await RawSse.open(endpoint(), {
    method: message === undefined ? 'GET' : 'POST',
    headers: headers(sessionId, lastEventId === undefined ? {} : { 'Last-Event-ID': lastEventId }),
    ...(message !== undefined && { body: JSON.stringify(message) }),
  });
  raws.push(raw);
  return raw;
}

async function waitFor(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/** Records the statuses a task's channel publishes, consecutive repeats collapsed. */
async function recordStatuses(): Promise<{ statuses: (taskId: string) => string[]; stop: () => Promise<void> }> {
  const subscriber = redis.duplicate();
  const seen = new Map<string, string[]>();
  subscriber.on('pmessage', (_pattern: string, _channel: string, message: string) => {
    const { taskId, status } = JSON.parse(message) as { taskId: string; status: string };
    const statuses = seen.get(taskId) ?? [];
    if (statuses.at(-1) !== status) seen.set(taskId, [...statuses, status]);
  });
  await subscriber.psubscribe(`${keys.prefix}:*:ch:task:*`);
  return { statuses: (taskId) => seen.get(taskId) ?? [], stop: async () => void (await subscriber.quit()) };
}

/** The kinds of the streams that carried a task's input requests (`result`, `session` or `direct`). */
async function carriersOf(taskId: string): Promise<string[]> {
  const relay = await redis.hgetall(keys.taskRelay(taskId));
  const streams = Object.entries(relay).flatMap(([field, stream]) => (field === 'cursor' ? [] : [stream]));
  return await Promise.all(streams.map(async (stream) => (await redis.hget(keys.sseState(stream), 'kind')) ?? '?'));
}

const related = (taskId: string) => ({ [RELATED_TASK_META_KEY]: { taskId } });
type Message = Record<string, unknown> & { method?: string; params?: Record<string, unknown> };
const progressOf = (messages: Message[]) =>
  messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params as Record<string, unknown>);
const responseTo = (id: unknown) => (messages: Message[]) => messages.some((m) => m.id === id && !('method' in m));

describe('cross-pod delivery of server-to-client messages', () => {
  it('[INP-1][INP-2][INP-3][INP-4] relays elicitations of a task on its tasks/result stream; answers reach the worker through either pod', async () => {
    const { client } = await connect();
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: `Ada${asked.length}` } };
    });
    let answers = 0;
    proxy.route = ({ method, rpcMethod }) => {
      if (method !== 'POST') return undefined;
      if (rpcMethod === undefined) return answers++ % 2; // the client's answers alternate pods
      return rpcMethod === 'tools/call' ? 0 : rpcMethod === 'tasks/result' ? 1 : undefined;
    };
    const from = proxy.log.length;
    const recorder = await recordStatuses();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'ask', arguments: { questions: 2, delayMs: 800 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    // tasks/result opens (and claims the task) well before the tool asks, 800 ms after it starts.
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    await recorder.stop();

    expect(result).toEqual({
      content: [{ type: 'text', text: '1:accept:Ada1 2:accept:Ada2' }],
      _meta: related(taskId),
    });
    expect(asked.map((params) => [params.message, params._meta])).toEqual([
      ['Name 1?', related(taskId)],
      ['Name 2?', related(taskId)],
    ]);
    // Every change (the creation is not one: its creator has the task in its answer).
    expect(recorder.statuses(taskId)).toEqual(['input_required', 'working', 'input_required', 'working', 'completed']);
    // Both requests went out on the tasks/result stream (held by pod 1), none on the GET stream.
    expect(await carriersOf(taskId)).toEqual(['result', 'result']);
    const answerTargets = proxy.log
      .slice(from)
      .filter((entry) => entry.method === 'POST' && entry.rpcMethod === undefined)
      .map((entry) => entry.target);
    expect(answerTargets).toEqual([0, 1]);
  });

  it('[INP-5] without a tasks/result stream, sends the request on the GET stream, held by the other pod', async () => {
    proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined);
    const { client, sessionId } = await connect();
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: 'Grace' } };
    });
    await waitFor(async () => (await redis.exists(keys.sessionStream(sessionId))) === 1, 'the GET stream');
    const created = await client.request(
      { method: 'tools/call', params: { name: 'ask', arguments: { questions: 1 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).status === 'completed', 'completion');
    expect(asked).toEqual([
      {
        mode: 'form',
        message: 'Name 1?',
        requestedSchema: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
        _meta: related(taskId),
      },
    ]);
    expect(await carriersOf(taskId)).toEqual(['session']);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: '1:accept:Grace' }]);
  });

  it('[INP-3] sends a pending request again on a new tasks/result stream when the first one was dropped; the first answer wins', async () => {
    const sessionId = await rawSession({ elicitation: {} });
    const from = proxy.log.length;
    let turn = 0;
    proxy.route = ({ method, rpcMethod }) => {
      if (method !== 'POST') return undefined;
      return rpcMethod === 'tools/call' ? 0 : rpcMethod === 'tasks/result' ? (turn++ % 2 === 0 ? 1 : 0) : turn++ % 2;
    };
    const created = await rawRequest(sessionId, 'tools/call', {
      name: 'ask',
      arguments: { questions: 1, delayMs: 150 },
      task: {},
    });
    const taskId = (created.result as { task: { taskId: string } }).task.taskId;
    const isRequest = (m: Message) => m.method === 'elicitation/create';
    const first = await openSse(sessionId, { jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId } });
    await first.until((messages) => messages.some(isRequest), 'the elicitation');
    await first.kill();
    // Dropped: the gateway saw the connection go and gave the stream's connection lease up (a request whose
    // stream still looks connected is left to that stream).
    const relayed = Object.entries(await redis.hgetall(keys.taskRelay(taskId))).filter(([field]) => field !== 'cursor');
    const firstStream = relayed[0]?.[1] as string;
    await waitFor(async () => (await redis.exists(keys.sseConnection(firstStream))) === 0, 'the first stream released');
    const second = await openSse(sessionId, { jsonrpc: '2.0', id: 2, method: 'tasks/result', params: { taskId } });
    await second.until((messages) => messages.some(isRequest), 'the elicitation again');
    const [sent] = (first.messages() as Message[]).filter(isRequest);
    const [again] = (second.messages() as Message[]).filter(isRequest);
    expect(again).toEqual(sent);
    expect(sent?.params?._meta).toEqual(related(taskId));
    // Both answers are accepted (202), on different pods; the first one is the one the tool gets.
    expect(await rawAnswer(sessionId, sent?.id, { action: 'accept', content: { name: 'First' } })).toBe(202);
    expect(await rawAnswer(sessionId, sent?.id, { action: 'accept', content: { name: 'Second' } })).toBe(202);
    await second.until(responseTo(2), 'the response');
    expect((second.messages() as Message[]).at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 2,
      result: { content: [{ type: 'text', text: '1:accept:First' }], _meta: related(taskId) },
    });
    expect(await carriersOf(taskId)).toEqual(['result']);
    const posts = proxy.log.slice(from).filter((entry) => entry.method === 'POST');
    expect(posts.filter((entry) => entry.rpcMethod === 'tasks/result').map((entry) => entry.target)).toEqual([1, 0]);
    expect(posts.filter((entry) => entry.rpcMethod === undefined).map((entry) => entry.target)).toEqual([0, 1]);
  });

  it('[INP-5] sends a pending request again on a GET stream opened after its tasks/result stream was dropped', async () => {
    const sessionId = await rawSession({ elicitation: {} });
    proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 0 : rpcMethod === 'tasks/result' ? 1 : undefined);
    const created = await rawRequest(sessionId, 'tools/call', {
      name: 'ask',
      arguments: { questions: 1, delayMs: 100 },
      task: {},
    });
    const taskId = (created.result as { task: { taskId: string } }).task.taskId;
    const isRequest = (m: Message) => m.method === 'elicitation/create';
    const waiting = await openSse(sessionId, { jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId } });
    await waiting.until((messages) => messages.some(isRequest), 'the elicitation');
    await waiting.kill();
    const get = await openSse(sessionId);
    await get.until((messages) => messages.some(isRequest), 'the elicitation on the GET stream');
    const [sent] = (waiting.messages() as Message[]).filter(isRequest);
    expect((get.messages() as Message[]).filter(isRequest)).toEqual([sent]);
    expect(await rawAnswer(sessionId, sent?.id, { action: 'accept', content: { name: 'Again' } })).toBe(202);
    await waitFor(async () => (await redis.hget(keys.task(taskId), 'status')) === 'completed', 'completion');
    expect(await rawRequest(sessionId, 'tasks/result', { taskId })).toMatchObject({
      result: { content: [{ type: 'text', text: '1:accept:Again' }] },
    });
    expect(await carriersOf(taskId)).toEqual(['session']);
  });

  it('carries decline and cancel answers of a direct call through the other pod; no related-task _meta', async () => {
    const { client } = await connect();
    const actions = ['decline', 'cancel'] as const;
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: actions[asked.length - 1] ?? 'cancel' };
    });
    proxy.route = ({ method, rpcMethod }) =>
      method !== 'POST' ? undefined : rpcMethod === 'tools/call' ? 0 : rpcMethod === undefined ? 1 : undefined;
    const result = await client.callTool({ name: 'ask', arguments: { questions: 2 } }, CallToolResultSchema);
    expect(result).toEqual({ content: [{ type: 'text', text: '1:decline 2:cancel' }] });
    expect(asked.map((params) => params._meta)).toEqual([undefined, undefined]);
  });

  it('[INP-2][INP-4] relays sampling of a task polled by the SDK, answered through either pod', async () => {
    const { client } = await connect();
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(CreateMessageRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { model: 'test-model', role: 'assistant', content: { type: 'text', text: 'tides are moon-made' } };
    });
    let turn = 0;
    proxy.route = ({ method }) => (method === 'POST' ? turn++ % 2 : undefined);
    let result: unknown;
    let taskId = '';
    const stream = client.experimental.tasks.callToolStream(
      { name: 'muse', arguments: { topic: 'tides', delayMs: 100 } },
      CallToolResultSchema,
      { task: {} },
    );
    for await (const message of stream) {
      if (message.type === 'taskCreated') taskId = message.task.taskId;
      if (message.type === 'result') result = message.result;
      if (message.type === 'error') throw message.error;
    }
    expect(result).toEqual({
      content: [{ type: 'text', text: 'test-model: tides are moon-made' }],
      _meta: related(taskId),
    });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatchObject({ maxTokens: 50, _meta: related(taskId) });
  });

  it('resumes a direct call killed mid-stream on the other pod: nothing lost, nothing repeated, logs at the session level', async () => {
    const sessionId = await rawSession();
    proxy.route = ({ method, rpcMethod }) =>
      method === 'GET' ? 1 : rpcMethod === 'logging/setLevel' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined;
    expect(await rawRequest(sessionId, 'logging/setLevel', { level: 'warning' })).toMatchObject({ result: {} });
    const call = {
      jsonrpc: '2.0',
      id: 'call-1',
      method: 'tools/call',
      params: { name: 'tick', arguments: { ticks: 30, ms: 30 }, _meta: { progressToken: 'p-1' } },
    };
    const first = await openSse(sessionId, call);
    expect(first.headers.get('content-type')).toBe('text/event-stream');
    await first.until((messages) => progressOf(messages).length >= 6, 'six progress notifications');
    await first.kill();
    // Ticks go on while no connection carries the stream (within the cancel grace period).
    await new Promise((resolve) => setTimeout(resolve, 200));
    const second = await openSse(sessionId, undefined, first.lastEventId());
    await second.until(responseTo('call-1'), 'the response');
    await second.ended;

    // The priming event: an id ("before the stream's first event", not logged), empty data, the retry hint.
    expect(first.events[0]).toEqual({ id: expect.stringMatching(/_0-0$/), data: '', retry: RETRY_MS });
    const messages = [...first.messages(), ...second.messages()] as Message[];
    expect(progressOf(messages)).toEqual(
      Array.from({ length: 30 }, (_v, i) => ({
        progressToken: 'p-1',
        progress: i + 1,
        total: 30,
        message: `tick ${i + 1}`,
      })),
    );
    const logs = messages.filter((m) => m.method === 'notifications/message').map((m) => m.params);
    expect(logs).toEqual(
      Array.from({ length: 15 }, (_v, i) => ({ level: 'warning', logger: 'tick', data: { tick: 2 * i + 1 } })),
    );
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 'call-1',
      result: { content: [{ type: 'text', text: 'ticked 30' }] },
    });
    const ids = [...first.events, ...second.events].map((event) => event.id);
    expect(new Set(ids).size).toBe(ids.length);
    const targets = proxy.log.filter((entry) => entry.rpcMethod === 'tools/call' || entry.method === 'GET');
    expect(targets.slice(-2).map((entry) => entry.target)).toEqual([0, 1]);
  });

  it('[PRG-1][RES-5][META-1] resumes a tasks/result stream on the other pod: every progress once, in order, with the original token', async () => {
    const sessionId = await rawSession();
    proxy.route = ({ method, rpcMethod }) =>
      method === 'GET' ? 0 : rpcMethod === 'tasks/result' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined;
    const created = await rawRequest(sessionId, 'tools/call', {
      name: 'tick',
      arguments: { ticks: 30, ms: 30 },
      task: {},
      _meta: { progressToken: 'p-2' },
    });
    const taskId = (created.result as { task: { taskId: string } }).task.taskId;
    const request = { jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } };
    const first = await openSse(sessionId, request);
    await first.until((messages) => progressOf(messages).length >= 5, 'five progress notifications');
    await first.kill();
    // The task runs on without a stream (RES-5).
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await rawRequest(sessionId, 'tasks/get', { taskId })).toMatchObject({ result: { status: 'working' } });
    const second = await openSse(sessionId, undefined, first.lastEventId());
    await second.until(responseTo(7), 'the response');

    const messages = [...first.messages(), ...second.messages()] as Message[];
    expect(progressOf(messages)).toEqual(
      Array.from({ length: 30 }, (_v, i) => ({
        progressToken: 'p-2',
        progress: i + 1,
        total: 30,
        message: `tick ${i + 1}`,
        _meta: related(taskId),
      })),
    );
    const logs = messages.filter((m) => m.method === 'notifications/message');
    expect(logs).toHaveLength(30);
    for (const log of logs) expect(log.params?._meta).toEqual(related(taskId));
    expect(messages.at(-1)).toEqual({
      jsonrpc: '2.0',
      id: 7,
      result: { content: [{ type: 'text', text: 'ticked 30' }], _meta: related(taskId) },
    });
  });

  it('[NTF-1] resumes the GET stream on the other pod with every status notification of the feed once, in order', async () => {
    const sessionId = await rawSession();
    proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 0 : rpcMethod === 'tools/call' ? 1 : undefined);
    const feedKey = keys.sessionFeed(sessionId);
    const get = await openSse(sessionId);
    await waitFor(() => get.events.length > 0, 'the priming event');
    const run = async (ticks: number): Promise<string> => {
      const created = await rawRequest(sessionId, 'tools/call', { name: 'tick', arguments: { ticks }, task: {} });
      return (created.result as { task: { taskId: string } }).task.taskId;
    };
    const statuses = (messages: Message[]) => messages.filter((m) => m.method === 'notifications/tasks/status');
    const early = [await run(1), await run(2)];
    await get.until((messages) => statuses(messages).length >= 2, 'two status notifications');
    await get.kill();
    const late = [await run(1), await run(3)];
    proxy.route = ({ method }) => (method === 'GET' ? 1 : undefined);
    const resumed = await openSse(sessionId, undefined, get.lastEventId());
    const all = [...early, ...late];
    await waitFor(async () => {
      const done = await Promise.all(
        all.map(async (id) => (await redis.hget(keys.task(id), 'status')) === 'completed'),
      );
      return done.every(Boolean);
    }, 'every task to complete');
    const expected = (await redis.xrange(feedKey, '-', '+'))
      .filter(([, fields]) => fields[0] === 's')
      .map(([, fields]) => JSON.parse(fields[1] as string) as { taskId: string; status: string; version: string });
    await resumed.until((messages) => statuses([...get.messages(), ...messages]).length >= expected.length, 'all');
    await new Promise((resolve) => setTimeout(resolve, 100));
    const received = statuses([...get.messages(), ...resumed.messages()]).map(
      (m) => m.params as Record<string, unknown>,
    );
    expect(received.map((params) => [params.taskId, params.status, params.lastUpdatedAt])).toEqual(
      expected.map((snapshot) => [
        snapshot.taskId,
        snapshot.status,
        new Date(Number((snapshot as unknown as { lastUpdatedAt: string }).lastUpdatedAt)).toISOString(),
      ]),
    );
    expect(new Set(received.map((params) => params.taskId))).toEqual(new Set(all));
    for (const id of all) expect(received.filter((p) => p.taskId === id).at(-1)?.status).toBe('completed');
  });

  it('[NTF-1][PRG-1] delivers status, progress and session-level logs of a task to the GET stream on either pod', async () => {
    for (const pod of [0, 1]) {
      proxy.route = ({ method, rpcMethod }) =>
        method === 'GET' ? pod : rpcMethod === 'tools/call' || rpcMethod === 'logging/setLevel' ? 1 - pod : undefined;
      const { client, sessionId } = await connect();
      const statuses: string[] = [];
      const logs: unknown[] = [];
      client.setNotificationHandler(TaskStatusNotificationSchema, ({ params }) => {
        statuses.push(params.status);
      });
      client.setNotificationHandler(LoggingMessageNotificationSchema, ({ params }) => {
        logs.push(params.data);
      });
      await client.setLoggingLevel('warning');
      await waitFor(async () => (await redis.exists(keys.sessionStream(sessionId))) === 1, 'the GET stream');
      const progress: unknown[] = [];
      let result: unknown;
      for await (const message of client.experimental.tasks.callToolStream(
        { name: 'tick', arguments: { ticks: 6, ms: 20 } },
        CallToolResultSchema,
        { task: {}, onprogress: (update) => progress.push(update.progress) },
      )) {
        if (message.type === 'result') result = message.result;
        if (message.type === 'error') throw message.error;
      }
      await waitFor(() => statuses.at(-1) === 'completed' && logs.length === 3, 'the last notifications');
      expect((result as { content: unknown }).content).toEqual([{ type: 'text', text: 'ticked 6' }]);
      expect(progress).toEqual([1, 2, 3, 4, 5, 6]);
      expect(logs).toEqual([{ tick: 1 }, { tick: 3 }, { tick: 5 }]);
      // Its one status change (creation is not notified: the creator has the task in its answer).
      expect(statuses).toEqual(['completed']);
      expect(proxy.log.filter((entry) => entry.method === 'GET').at(-1)?.target).toBe(pod);
      await client.close();
    }
  });
});
