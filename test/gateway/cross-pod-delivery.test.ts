import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { type Message, related, responseTo, useDeliveryPods, waitFor } from './fixtures/delivery-pods.js';

// Server-to-client requests of a task or a direct call reach the client on whichever pod holds its stream; answers come back through either pod. Two gateway processes and one worker process behind a proxy
// without stickiness (fixtures/delivery-pods.ts).

const pods = useDeliveryPods('deliver');
const { connect, rawSession, rawRequest, rawAnswer, openSse, recordStatuses, carriersOf } = pods;

describe('cross-pod delivery of server-to-client messages', () => {
  it('[INP-1][INP-2][INP-3][INP-4] relays elicitations of a task on its tasks/result stream; answers reach the worker through either pod', async () => {
    const { client } = await connect();
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: `Ada${asked.length}` } };
    });
    let answers = 0;
    pods.proxy.route = ({ method, rpcMethod }) => {
      if (method !== 'POST') return undefined;
      if (rpcMethod === undefined) return answers++ % 2; // the client's answers alternate pods
      return rpcMethod === 'tools/call' ? 0 : rpcMethod === 'tasks/result' ? 1 : undefined;
    };
    const from = pods.proxy.log.length;
    const recorder = await recordStatuses();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'ask', arguments: { questions: 2, delayMs: 800 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    // tasks/result waits well before the tool asks, 800 ms after it starts.
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
    // Each request went out once. tasks/result waits in the process and opens its logged stream (held by pod 1)
    // when the first request arrives, so the first may leave on the GET stream instead (INP-5: clients expect
    // task messages on any SSE stream). The second, asked after the first was answered, finds that stream.
    const carriers = await carriersOf(taskId);
    expect(carriers).toHaveLength(2);
    expect(['result', 'session']).toContain(carriers[0]);
    expect(carriers[1]).toBe('result');
    const answerTargets = pods.proxy.log
      .slice(from)
      .filter((entry) => entry.method === 'POST' && entry.rpcMethod === undefined)
      .map((entry) => entry.target);
    expect(answerTargets).toEqual([0, 1]);
  });

  it('[INP-5] without a tasks/result stream, sends the request on the GET stream, held by the other pod', async () => {
    pods.proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 1 : rpcMethod === 'tools/call' ? 0 : undefined);
    const { client, sessionId } = await connect();
    const asked: Record<string, unknown>[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params as Record<string, unknown>);
      return { action: 'accept', content: { name: 'Grace' } };
    });
    await waitFor(async () => (await pods.redis.exists(pods.keys.sessionStream(sessionId))) === 1, 'the GET stream');
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
    const from = pods.proxy.log.length;
    let turn = 0;
    pods.proxy.route = ({ method, rpcMethod }) => {
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
    const relayed = Object.entries(await pods.redis.hgetall(pods.keys.taskRelay(taskId))).filter(
      ([field]) => field !== 'cursor',
    );
    const firstStream = relayed[0]?.[1] as string;
    await waitFor(
      async () => (await pods.redis.exists(pods.keys.sseConnection(firstStream))) === 0,
      'the first stream released',
    );
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
    const posts = pods.proxy.log.slice(from).filter((entry) => entry.method === 'POST');
    expect(posts.filter((entry) => entry.rpcMethod === 'tasks/result').map((entry) => entry.target)).toEqual([1, 0]);
    expect(posts.filter((entry) => entry.rpcMethod === undefined).map((entry) => entry.target)).toEqual([0, 1]);
  });

  it('[INP-5] sends a pending request again on a GET stream opened after its tasks/result stream was dropped', async () => {
    const sessionId = await rawSession({ elicitation: {} });
    pods.proxy.route = ({ method, rpcMethod }) => (method === 'GET' ? 0 : rpcMethod === 'tasks/result' ? 1 : undefined);
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
    await waitFor(async () => (await pods.redis.hget(pods.keys.task(taskId), 'status')) === 'completed', 'completion');
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
    pods.proxy.route = ({ method, rpcMethod }) =>
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
    pods.proxy.route = ({ method }) => (method === 'POST' ? turn++ % 2 : undefined);
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
});
