import { rawInitialize, useRedis } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rev2026Request, TASKS, untilStatus } from './support/rev2026-07-28.js';
import { useStacks } from './support/stack.js';

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** A raw 2026-07-28 POST whose answer is read whole: JSON, or the SSE events in order. */
async function post(
  url: string,
  method: string,
  params: Record<string, unknown>,
  headers: Record<string, string> = {},
) {
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      ...headers,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 7,
      method,
      params: { ...params, _meta: { ...META, ...(params._meta as Record<string, unknown> | undefined) } },
    }),
  });
  const text = await response.text();
  const events = text
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line.length > 6)
    .map((line) => JSON.parse(line.slice(6)) as Record<string, unknown>);
  return { status: response.status, type: response.headers.get('content-type') ?? '', text, events };
}

/** Takes a name under the key `name` first, then becomes a task (inputBeforeTask). */
const greetLater = defineTool({
  name: 'greet_later',
  description: 'Asks for a name before it runs as a task',
  inputSchema: z.object({}),
  taskSupport: 'required',
  inputBeforeTask: true,
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
      { key: 'name' },
    );
    return `Later, ${String(answer.content?.name)}!`;
  },
});

/** Mirrors its region argument into the Mcp-Param-Region header (SEP-2243). */
const regional = defineTool({
  name: 'regional',
  description: 'Runs in a region',
  inputSchema: { type: 'object', properties: { region: { type: 'string', 'x-mcp-header': 'Region' } } },
  taskSupport: 'forbidden',
  handler: (args) => `in ${String((args as { region?: string }).region)}`,
});

/** Opens a `subscriptions/listen` stream; `next()` reads until `count` messages arrived. */
async function openListen(
  url: string,
  notifications: Record<string, unknown>,
  capabilities: Record<string, unknown> = {},
) {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: { _meta: { ...META, 'io.modelcontextprotocol/clientCapabilities': capabilities }, notifications },
    }),
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const events: Record<string, unknown>[] = [];
  let buffer = '';
  const until = async (count: number): Promise<Record<string, unknown>[]> => {
    while (events.length < count) {
      const { value } = await reader.read();
      buffer += new TextDecoder().decode(value);
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
    }
    return events;
  };
  return { until, close: () => controller.abort() };
}

describe('revision 2026-07-28: streams, rounds into tasks, headers', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('streams the progress of a call that asked for it and ends with the result; without a token, plain JSON', async () => {
    const { url } = await start({ tools: TEST_TOOLS });
    const params = { name: 'chatty', arguments: { steps: 2 }, _meta: { progressToken: 'p1' } };
    const streamed = await post(url, 'tools/call', params, { 'Mcp-Name': 'chatty' });
    expect(streamed.type).toContain('text/event-stream');
    const progress = streamed.events.filter((event) => event.method === 'notifications/progress');
    expect(progress.map((event) => (event.params as { progress: number }).progress)).toEqual([1, 2]);
    expect(progress.every((event) => (event.params as { progressToken: string }).progressToken === 'p1')).toBe(true);
    // No log messages: the request set no logLevel.
    expect(streamed.events.some((event) => event.method === 'notifications/message')).toBe(false);
    expect(streamed.events.at(-1)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
    const plain = await post(url, 'tools/call', { name: 'chatty', arguments: { steps: 2 } }, { 'Mcp-Name': 'chatty' });
    expect(plain.type).toContain('application/json');
    expect(JSON.parse(plain.text)).toMatchObject({ id: 7, result: { resultType: 'complete' } });
  });

  it('gathers the first input in rounds, then answers CreateTaskResult for a tool with inputBeforeTask', async () => {
    const { url } = await start({ tools: [greetLater] });
    const options = { capabilities: { elicitation: {}, extensions: { [TASKS]: {} } } };
    const first = await rev2026Request(url, 'tools/call', { name: 'greet_later', arguments: {} }, options);
    expect(first.body.result).toMatchObject({ resultType: 'input_required', inputRequests: { name: {} } });
    expect(first.body.result).not.toHaveProperty('taskId');
    const second = await rev2026Request(
      url,
      'tools/call',
      {
        name: 'greet_later',
        arguments: {},
        requestState: first.body.result?.requestState,
        inputResponses: { name: { action: 'accept', content: { name: 'Lin' } } },
      },
      options,
    );
    const task = second.body.result ?? {};
    expect(task).toMatchObject({ resultType: 'task', taskId: expect.any(String) });
    expect(task).not.toHaveProperty('requestState');
    // The round that supplied the last input reports the task as it is after the round, never input_required.
    expect(['working', 'completed']).toContain(task.status);
    const deadline = Date.now() + 10_000;
    let got: Record<string, unknown> = {};
    while (got.status !== 'completed' && Date.now() < deadline) {
      got = (await rev2026Request(url, 'tasks/get', { taskId: task.taskId }, options)).body.result ?? {};
    }
    expect(got.result).toMatchObject({ content: [{ text: 'Later, Lin!' }] });
  });

  it('checks Mcp-Param headers against the arguments, literal or Base64', async () => {
    const { url } = await start({ tools: [regional] });
    const call = (region: string, header?: string) =>
      rev2026Request(
        url,
        'tools/call',
        { name: 'regional', arguments: { region } },
        { headers: header === undefined ? {} : { 'Mcp-Param-Region': header } },
      );
    expect((await call('eu', 'eu')).body.result).toMatchObject({ content: [{ text: 'in eu' }] });
    const encoded = `=?base64?${Buffer.from('eu-west').toString('base64')}?=`;
    expect((await call('eu-west', encoded)).body.result).toMatchObject({ content: [{ text: 'in eu-west' }] });
    for (const [region, header] of [
      ['eu', undefined],
      ['eu', 'us'],
      ['eu', '=?base64?ZX!!?='],
    ] as const) {
      const refused = await call(region, header);
      expect([header, refused.status, refused.body.error?.code]).toEqual([header, 400, -32020]);
    }
  });

  it('answers an unknown resource with -32602 here and -32002 on a session; sessions are untouched', async () => {
    const { url } = await start({ tools: TEST_TOOLS });
    const missing = await rev2026Request(url, 'resources/read', { uri: 'test://nothing' });
    expect(missing.body.error?.code).toBe(-32602);
    const sessionId = await rawInitialize(url);
    const response = await fetch(url, {
      method: 'POST',
      headers: {
        'Content-Type': 'application/json',
        Accept: 'application/json, text/event-stream',
        'MCP-Protocol-Version': '2025-11-25',
        'Mcp-Session-Id': sessionId,
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'resources/read', params: { uri: 'test://nothing' } }),
    });
    expect(((await response.json()) as { error: { code: number } }).error.code).toBe(-32002);
  });

  it('acknowledges a subscriptions/listen filter first and relays only the news it asked for', async () => {
    const { url, worker } = await start({ tools: TEST_TOOLS });
    const listen = await openListen(url, { toolsListChanged: true, taskIds: ['AAAAnot-visible'] });
    const [ack] = await listen.until(1);
    // No tasks extension declared: the task ids are not honoured.
    expect(ack).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/subscriptions/acknowledged',
      params: {
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
        notifications: { toolsListChanged: true },
      },
    });
    // A worker registering its tools again is tool-list news.
    await worker?.close({ deadlineMs: 500 });
    await start({ tools: TEST_TOOLS.slice(0, 1) });
    const events = await listen.until(2);
    expect(events[1]).toEqual({
      jsonrpc: '2.0',
      method: 'notifications/tools/list_changed',
      params: { _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
    });
    listen.close();
  });

  it('sends notifications/tasks for the task ids a client of the tasks extension follows', async () => {
    const { url } = await start({ tools: TEST_TOOLS });
    const capabilities = { extensions: { [TASKS]: {} } };
    const created = await rev2026Request(
      url,
      'tools/call',
      { name: 'sleep', arguments: { ms: 1000 } },
      { capabilities },
    );
    const taskId = String(created.body.result?.taskId);
    const listen = await openListen(url, { taskIds: [taskId, 'AAAAunknown'] }, capabilities);
    const [ack] = await listen.until(1);
    expect(ack?.params).toMatchObject({ notifications: { taskIds: [taskId] } });
    // First the task as it is when the stream opens, then its change.
    const events = await listen.until(3);
    expect(events[1]).toMatchObject({ method: 'notifications/tasks', params: { taskId, status: 'working' } });
    expect(events[1]?.params).not.toHaveProperty('result');
    expect(events[2]).toMatchObject({
      method: 'notifications/tasks',
      params: {
        taskId,
        status: 'completed',
        ttlMs: expect.any(Number),
        result: { content: [{ text: 'slept 1000 ms' }] },
        _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' },
      },
    });
    listen.close();
  });

  it('tells a listener that subscribes after the task finished its outcome at once', async () => {
    const { url } = await start({ tools: TEST_TOOLS });
    const capabilities = { extensions: { [TASKS]: {} } };
    const created = await rev2026Request(url, 'tools/call', { name: 'sleep', arguments: { ms: 0 } }, { capabilities });
    const taskId = String(created.body.result?.taskId);
    await untilStatus(url, taskId, ['completed'], { capabilities });
    const listen = await openListen(url, { taskIds: [taskId] }, capabilities);
    const events = await listen.until(2);
    expect(events.map((event) => event.method)).toEqual([
      'notifications/subscriptions/acknowledged',
      'notifications/tasks',
    ]);
    expect(events[1]?.params).toMatchObject({
      taskId,
      status: 'completed',
      result: { content: [{ text: 'slept 0 ms' }] },
    });
    listen.close();
  });
});
