import { connectClient, useRedis, waitFor } from '@taskgate/test-harness';
import { TEST_TOOLS } from '@taskgate/test-harness/tools';
import { defineTool } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { rev2026Request, TASKS, untilStatus } from './support/rev2026-07-28.js';
import { useStacks } from './support/stack.js';

const withTasks = { capabilities: { extensions: { [TASKS]: {} }, elicitation: {} } };

/** Asks for a name under the key `name` (optional: a task for clients of the tasks extension). */
const askName = defineTool({
  name: 'ask_name',
  description: 'Asks for a name, then greets',
  inputSchema: z.object({}),
  taskSupport: 'optional',
  async handler(_args, ctx) {
    const answer = await ctx.elicit(
      { message: 'Name?', requestedSchema: { type: 'object', properties: { name: { type: 'string' } } } },
      { key: 'name' },
    );
    return `Hello, ${String(answer.content?.name)}!`;
  },
});

describe('revision 2026-07-28 on the same endpoint', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('answers server/discover with the versions, the tasks extension and the server info', async () => {
    const { url } = await start({ tools: false });
    const { status, body } = await rev2026Request(url, 'server/discover');
    expect(status).toBe(200);
    expect(body.result).toMatchObject({
      resultType: 'complete',
      supportedVersions: ['2026-07-28'],
      capabilities: { extensions: { [TASKS]: {} }, tools: { listChanged: true } },
      _meta: { 'io.modelcontextprotocol/serverInfo': { name: 'taskgate' } },
    });
  });

  it('checks the headers against the body and the version, keeping the request id', async () => {
    const { url } = await start({ tools: false });
    const method = await rev2026Request(url, 'tools/list', {}, { headers: { 'Mcp-Method': 'prompts/list' } });
    expect(method.status).toBe(400);
    expect(method.body.error?.code).toBe(-32020);
    const name = await rev2026Request(
      url,
      'tools/call',
      { name: 'echo', arguments: {} },
      { headers: { 'Mcp-Name': 'x' } },
    );
    expect([name.status, name.body.error?.code]).toEqual([400, -32020]);
    const version = await rev2026Request(
      url,
      'server/discover',
      {},
      {
        headers: { 'MCP-Protocol-Version': '2099-01-01' },
        meta: { 'io.modelcontextprotocol/protocolVersion': '2099-01-01' },
      },
    );
    expect(version.status).toBe(400);
    expect(version.body.error).toMatchObject({
      code: -32022,
      data: { supported: ['2026-07-28'], requested: '2099-01-01' },
    });
    const meta = await rev2026Request(
      url,
      'server/discover',
      {},
      { meta: { 'io.modelcontextprotocol/clientCapabilities': undefined } },
    );
    expect([meta.status, meta.body.error?.code]).toEqual([400, -32602]);
    for (const removed of ['ping', 'tasks/result', 'tasks/list', 'logging/setLevel', 'resources/subscribe']) {
      const reply = await rev2026Request(url, removed, { taskId: 'x' });
      expect([removed, reply.status, reply.body.error?.code]).toEqual([removed, 404, -32601]);
    }
  });

  it('wakes a call that waits from its task channel: no read of the task while the tool runs', async () => {
    const stack = await start({ tools: TEST_TOOLS });
    const call = rev2026Request(stack.url, 'tools/call', { name: 'sleep', arguments: { ms: 4000 } });
    // The call waits once its task's channel is subscribed; the reads that follow the subscription come next.
    const channels = async () => (await stack.redis.pubsub('CHANNELS', stack.keys.taskChannelPattern())) as string[];
    await waitFor(async () => (await channels()).length === 1, 'the call waiting on its task');
    await new Promise((resolve) => setTimeout(resolve, 500));
    const monitor = await stack.redis.duplicate().monitor();
    const commands: string[] = [];
    // Commands a script runs are shown with the source `lua`: a transition of the worker, not a read.
    monitor.on('monitor', (_time: string, args: string[], source: string) => {
      if (source !== 'lua') commands.push(args.join(' '));
    });
    await new Promise((resolve) => setTimeout(resolve, 2000));
    monitor.disconnect();
    // Status checks (one field) are the safety nets of the worker and the follower; no full read of the record.
    const fullReads = commands.filter((command) => /^hmget \S+:task:\S+ status statusMessage /i.test(command));
    expect(fullReads).toEqual([]);
    expect((await call).body.result).toMatchObject({ resultType: 'complete', content: [{ text: 'slept 4000 ms' }] });
  });

  it('runs a forbidden tool as a call and an optional one as a task for clients of the extension', async () => {
    const { url } = await start({ tools: TEST_TOOLS });
    const echo = await rev2026Request(url, 'tools/call', { name: 'echo', arguments: { text: 'hi' } }, withTasks);
    expect(echo.body.result).toEqual({ content: [{ type: 'text', text: 'hi' }], resultType: 'complete' });
    const plain = await rev2026Request(url, 'tools/call', { name: 'sleep', arguments: { ms: 1 } });
    expect(plain.body.result).toMatchObject({ resultType: 'complete', content: [{ text: 'slept 1 ms' }] });
    const created = await rev2026Request(url, 'tools/call', { name: 'sleep', arguments: { ms: 50 } }, withTasks);
    const task = created.body.result ?? {};
    expect(task).toMatchObject({ resultType: 'task', status: 'working', ttlMs: expect.any(Number) });
    expect(task).not.toHaveProperty('ttl');
    expect(task).not.toHaveProperty('task');
    const done = await untilStatus(url, String(task.taskId), ['completed']);
    expect(done.result).toEqual({ content: [{ type: 'text', text: 'slept 50 ms' }], resultType: 'complete' });
    // A tool error is `completed` with isError on this wire; cancelling a finished task is an acknowledgement.
    const failing = await rev2026Request(url, 'tools/call', { name: 'fail', arguments: { message: 'no' } }, withTasks);
    const failed = await untilStatus(url, String(failing.body.result?.taskId), ['completed', 'failed']);
    expect(failed).toMatchObject({ status: 'completed', result: { isError: true, content: [{ text: 'no' }] } });
    // A JSON-RPC error is `failed` with the error inlined, and no result.
    const crashing = await rev2026Request(url, 'tools/call', { name: 'crash', arguments: { code: -32000 } }, withTasks);
    const crashed = await untilStatus(url, String(crashing.body.result?.taskId), ['completed', 'failed']);
    expect(crashed).toMatchObject({ status: 'failed', error: { code: -32000, message: 'crashed on purpose' } });
    expect(crashed).not.toHaveProperty('result');
    const cancel = await rev2026Request(url, 'tasks/cancel', { taskId: failed.taskId }, withTasks);
    expect(cancel.body.result).toEqual({ resultType: 'complete' });
    const unknown = await rev2026Request(url, 'tasks/get', { taskId: 'AAAAnothing' }, withTasks);
    expect(unknown.body.error?.code).toBe(-32602);
    const undeclared = await rev2026Request(url, 'tasks/get', { taskId: String(task.taskId) });
    expect([undeclared.status, undeclared.body.error?.code]).toEqual([400, -32021]);
    expect(undeclared.body.error?.data).toEqual({ requiredCapabilities: { extensions: { [TASKS]: {} } } });
    const required = await rev2026Request(url, 'tools/call', { name: 'report', arguments: { pages: 1 } });
    expect([required.status, required.body.error?.code]).toEqual([400, -32021]);
  });

  it('asks for input in rounds with a signed requestState; an altered state is refused', async () => {
    const { url } = await start({ tools: [askName] });
    const capabilities = { capabilities: { elicitation: {} } };
    const first = await rev2026Request(url, 'tools/call', { name: 'ask_name', arguments: {} }, capabilities);
    const round = first.body.result ?? {};
    expect(round).toMatchObject({
      resultType: 'input_required',
      inputRequests: { name: { method: 'elicitation/create', params: { message: 'Name?' } } },
    });
    const requestState = String(round.requestState);
    const tampered = await rev2026Request(
      url,
      'tools/call',
      { name: 'ask_name', arguments: {}, requestState: `${requestState}x`, inputResponses: {} },
      capabilities,
    );
    expect(tampered.body.error?.code).toBe(-32602);
    const answered = await rev2026Request(
      url,
      'tools/call',
      {
        name: 'ask_name',
        arguments: {},
        requestState,
        inputResponses: { name: { action: 'accept', content: { name: 'Ada' } }, other: { action: 'decline' } },
      },
      capabilities,
    );
    expect(answered.body.result).toEqual({ content: [{ type: 'text', text: 'Hello, Ada!' }], resultType: 'complete' });
  });

  it('shows a task waiting for input as inputRequests and resumes it with tasks/update', async () => {
    const { url } = await start({ tools: [askName] });
    const created = await rev2026Request(url, 'tools/call', { name: 'ask_name', arguments: {} }, withTasks);
    const taskId = String(created.body.result?.taskId);
    const waiting = await untilStatus(url, taskId, ['input_required']);
    expect(waiting.inputRequests).toEqual({
      name: { method: 'elicitation/create', params: expect.objectContaining({ message: 'Name?' }) },
    });
    expect(waiting).not.toHaveProperty('requestState');
    const ignored = await rev2026Request(
      url,
      'tasks/update',
      { taskId, inputResponses: { nope: { action: 'decline' } } },
      withTasks,
    );
    expect(ignored.body.result).toEqual({ resultType: 'complete' });
    expect((await untilStatus(url, taskId, ['input_required'])).inputRequests).toHaveProperty('name');
    const update = { taskId, inputResponses: { name: { action: 'accept', content: { name: 'Grace' } } } };
    expect((await rev2026Request(url, 'tasks/update', update, withTasks)).body.result).toEqual({
      resultType: 'complete',
    });
    const done = await untilStatus(url, taskId, ['completed']);
    expect(done.result).toMatchObject({ content: [{ text: 'Hello, Grace!' }] });
  });

  it('shows one principal its tasks from either revision (auth on)', async () => {
    const tokens = { 'alice-token-0123456789': 'alice', 'bob-token-0123456789': 'bob' };
    const { url } = await start({ gateway: { auth: { mode: 'tokens', tokens } } });
    const alice = { ...withTasks, token: 'alice-token-0123456789' };
    const created = await rev2026Request(url, 'tools/call', { name: 'sleep', arguments: { ms: 1 } }, alice);
    const newTask = String(created.body.result?.taskId);
    const { client } = await connectClient(url, { token: 'alice-token-0123456789' });
    const old = (await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1 }, task: {} } },
      z.looseObject({ task: z.looseObject({ taskId: z.string() }) }),
    )) as { task: { taskId: string } };
    // The 2025 client reads the task the 2026 client created, and the other way round.
    await untilStatus(url, newTask, ['completed'], alice);
    const seen = await client.request({ method: 'tasks/get', params: { taskId: newTask } }, z.looseObject({}));
    expect(seen).toMatchObject({ taskId: newTask, status: 'completed' });
    const read = await untilStatus(url, old.task.taskId, ['completed'], alice);
    expect(read.result).toMatchObject({ content: [{ text: 'slept 1 ms' }] });
    const bob = await rev2026Request(
      url,
      'tasks/get',
      { taskId: newTask },
      { ...withTasks, token: 'bob-token-0123456789' },
    );
    expect(bob.body.error?.code).toBe(-32602);
  });
});
