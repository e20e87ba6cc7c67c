import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, freePort, scrape } from '@taskgate/test-harness';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { RawSse } from '../gateway/fixtures/raw-sse.js';
import { type Json, mcpClient, progressOf, request2026, terminal } from './mcp-client.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import { everythingStdio, sdkClient, upstreamPids } from './upstream-support.js';

// The reference MCP server (@modelcontextprotocol/server-everything, from npm) over stdio, behind a bridge
// (`taskgate bridge`) and two gateways without stickiness; the clients are the official SDK's.

let pods: Pods;
let bridge: ForkedProcess;
let metricsPort: number;
const clients: Client[] = [];

beforeAll(async () => {
  const config = writeConfig({ servers: [everythingStdio({ tools: { exclude: ['*-env'] }, inlineWaitMs: 1000 })] });
  metricsPort = await freePort();
  pods = await startPods(
    'upstream-stdio',
    { TASKGATE_CURSOR_SECRET: 'upstream-stdio-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '100' },
    async (env) => {
      bridge = await forkBridge({ ...env, TASKGATE_METRICS_PORT: String(metricsPort) }, config);
      return bridge;
    },
  );
  // Every test starts once the bridge has published the upstream's tools, those added on list_changed too.
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, {});
  await waitFor(async () => {
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    return names.includes('everything_trigger-elicitation-request');
  }, 'the upstream tools');
  await client.close();
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await pods?.stop();
  removeConfigs();
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, capabilities);
  clients.push(client);
  return client;
}

/** Calls `name` as a task with the SDK's stream; the messages' types, the progress and the result. */
async function callAsTask(client: Client, name: string, args: Record<string, unknown>) {
  const progress: Progress[] = [];
  const types: string[] = [];
  let result: unknown;
  for await (const message of client.experimental.tasks.callToolStream(
    { name, arguments: args },
    CallToolResultSchema,
    {
      task: {},
      onprogress: (update) => progress.push(update),
    },
  )) {
    types.push(message.type);
    if (message.type === 'result') result = message.result;
    if (message.type === 'error') throw message.error;
  }
  return { types, progress, result: result as { content: { type: string; text?: string }[]; isError?: boolean } };
}

describe('bridge servers: an MCP server over stdio as durable task tools', () => {
  it('lists the upstream tools under the prefix with their schemas and annotations, filtered by exclude', async () => {
    const client = await connect();
    let names: string[] = [];
    await waitFor(async () => {
      names = (await client.listTools()).tools.map((tool) => tool.name);
      return names.includes('everything_trigger-elicitation-request');
    }, 'the conditional tools after list_changed');
    expect(names).toEqual(
      expect.arrayContaining(['everything_echo', 'everything_get-sum', 'everything_trigger-sampling-request']),
    );
    expect(names.filter((name) => !name.startsWith('everything_'))).toEqual([]);
    expect(names).not.toContain('everything_get-env');
    const tool = (await client.listTools()).tools.find(
      (entry) => entry.name === 'everything_trigger-long-running-operation',
    );
    expect(tool).toMatchObject({
      title: 'Trigger Long Running Operation Tool',
      description: 'Demonstrates a long running operation with progress updates.',
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
      execution: { taskSupport: 'optional' },
      inputSchema: { type: 'object', properties: { duration: { type: 'number' }, steps: { type: 'number' } } },
    });
  });

  it('runs trigger-long-running-operation as a task with every progress step and the upstream result', async () => {
    // Raw JSON-RPC: every message of the task's tasks/result stream, in order, up to the result.
    const raw = mcpClient(() => `${pods.proxy.origin}/mcp`);
    const sid = await raw.session();
    const taskId = await raw.createTask(
      sid,
      'everything_trigger-long-running-operation',
      { duration: 1, steps: 5 },
      { progressToken: 'lr-1' },
    );
    const messages = await (await raw.openResult(sid, taskId)).messages();
    await raw.close();
    expect(progressOf(messages)).toEqual([1, 2, 3, 4, 5].map((step) => ['lr-1', step, 5, undefined]));
    const result = messages.find((m) => m.id === 7)?.result as Json;
    expect(result.content).toEqual([
      { type: 'text', text: 'Long running operation completed. Duration: 1 seconds, Steps: 5.' },
    ]);
  });

  it('keeps the last progress step of a call whose steps and result arrive together', async () => {
    // With no delay the upstream writes its progress and its result at once; every step must still arrive. The
    // session's GET stream carries the progress of tasks no tasks/result stream carries.
    const raw = mcpClient(() => `${pods.proxy.origin}/mcp`);
    const sid = await raw.session();
    const stream = await RawSse.session(`${pods.proxy.origin}/mcp`, sid);
    const tokens = ['fast-1', 'fast-2', 'fast-3'];
    for (const token of tokens) {
      const taskId = await raw.createTask(
        sid,
        'everything_trigger-long-running-operation',
        { duration: 0, steps: 5 },
        { progressToken: token },
      );
      await raw.until(sid, taskId, terminal, 'the fast call to finish');
    }
    const expected = tokens.flatMap((token) => [1, 2, 3, 4, 5].map((step) => [token, step, 5, undefined]));
    await stream.until((messages) => progressOf(messages).length >= expected.length, 'every progress step');
    await stream.kill();
    await raw.close();
    expect(progressOf(stream.messages())).toEqual(expected);
  });

  it('answers the upstream elicitation with the client, through either gateway', async () => {
    const client = await connect({ elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com', integer: 7 } };
    });
    const { result } = await callAsTask(client, 'everything_trigger-elicitation-request', {});
    expect(asked).toHaveLength(1);
    expect(JSON.stringify(result.content)).toContain('Ada');
    expect(result.isError).not.toBe(true);
  });

  it('answers the upstream elicitation from a 2026-07-28 client: inputRequests on tasks/get, the answer by tasks/update', async () => {
    const call = (method: string, params: Json): Promise<Json> =>
      request2026(`${pods.proxy.origin}/mcp`, method, params, { elicitation: { form: {} } });
    const created = await call('tools/call', { name: 'everything_trigger-elicitation-request', arguments: {} });
    expect(created).toMatchObject({ resultType: 'task' });
    const taskId = created.taskId as string;
    let task: Json = {};
    await waitFor(async () => {
      task = await call('tasks/get', { taskId });
      return task.status === 'input_required';
    }, 'the upstream question');
    const requests = task.inputRequests as Record<string, Json>;
    const [key] = Object.keys(requests);
    expect(requests[String(key)]).toMatchObject({ method: 'elicitation/create' });
    const content = { name: 'Grace', check: true, email: 'grace@example.com', integer: 3 };
    await call('tasks/update', { taskId, inputResponses: { [String(key)]: { action: 'accept', content } } });
    await waitFor(async () => {
      task = await call('tasks/get', { taskId });
      return task.status === 'completed';
    }, 'the upstream result');
    expect(JSON.stringify(task.result)).toContain('Grace');
    expect((task.result as Json).isError).not.toBe(true);
  });

  it('answers the upstream sampling request with the client', async () => {
    const client = await connect({ sampling: {} });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: 'test-model',
      role: 'assistant',
      content: { type: 'text', text: 'sampled by the test client' },
    }));
    const { result } = await callAsTask(client, 'everything_trigger-sampling-request', { prompt: 'hello' });
    expect(JSON.stringify(result.content)).toContain('sampled by the test client');
  });

  it('publishes the upstream resources, templates and prompts; reads and gets go to the upstream', async () => {
    const client = await connect();
    let templates: Awaited<ReturnType<Client['listResourceTemplates']>>['resourceTemplates'] = [];
    await waitFor(async () => {
      templates = (await client.listResourceTemplates()).resourceTemplates;
      return templates.length > 0;
    }, 'the upstream resource templates');
    expect(templates).toContainEqual(
      expect.objectContaining({
        name: 'everything_Dynamic Text Resource',
        uriTemplate: 'demo://resource/dynamic/text/{resourceId}',
      }),
    );
    const read = await client.readResource({ uri: 'demo://resource/dynamic/text/3' });
    expect(read.contents).toEqual([
      {
        uri: 'demo://resource/dynamic/text/3',
        mimeType: 'text/plain',
        text: expect.stringMatching(/^Resource 3: This is a plaintext resource created at /),
      },
    ]);
    const resources = (await client.listResources()).resources;
    const document = resources.find((resource) => resource.uri.startsWith('demo://resource/static/document/'));
    expect(document?.name.startsWith('everything_')).toBe(true);
    const prompts = (await client.listPrompts()).prompts;
    expect(prompts.find((prompt) => prompt.name === 'everything_args-prompt')).toMatchObject({
      title: 'Arguments Prompt',
      arguments: [
        { name: 'city', description: 'Name of the city', required: true },
        { name: 'state', required: false },
      ],
    });
    const prompt = await client.getPrompt({ name: 'everything_args-prompt', arguments: { city: 'Paris' } });
    expect(prompt.messages).toEqual([{ role: 'user', content: { type: 'text', text: "What's weather in Paris?" } }]);
  });

  it('a plain call (no task) gets the upstream result unchanged', async () => {
    const client = await connect();
    const result = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3 } });
    expect(result.content).toEqual([{ type: 'text', text: 'The sum of 2 and 3 is 5.' }]);
  });

  it('answers get-sum inline to a 2026-07-28 client of the tasks extension (inlineWaitMs), as a task still', async () => {
    const call = (method: string, params: Json): Promise<Json> =>
      request2026(`${pods.proxy.origin}/mcp`, method, params);
    const result = await call('tools/call', { name: 'everything_get-sum', arguments: { a: 20, b: 22 } });
    expect(result).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: 'The sum of 20 and 22 is 42.' }],
    });
    // The task exists either way: its id is in the related-task _meta, and tasks/get shows it completed.
    const taskId = (result._meta as Record<string, Json>)['io.modelcontextprotocol/related-task']?.taskId as string;
    expect(await call('tasks/get', { taskId })).toMatchObject({ taskId, status: 'completed' });
    // A slower upstream call than the wait is answered with the task.
    const slow = await call('tools/call', {
      name: 'everything_trigger-long-running-operation',
      arguments: { duration: 2, steps: 2 },
    });
    expect(slow).toMatchObject({ resultType: 'task', status: 'working' });
    let done: Json = {};
    await waitFor(
      async () => {
        done = await call('tasks/get', { taskId: slow.taskId });
        return done.status === 'completed';
      },
      'the slower call',
      10_000,
    );
    expect(done.result).toMatchObject({
      content: [{ text: expect.stringMatching(/^Long running operation completed/) }],
    });
  });

  it('the server killed -9 fails the running call with a clear message; it restarts and the next call works', async () => {
    const client = await connect();
    const first = upstreamPids(bridge, 'everything');
    const pid = first.at(-1) as number;
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'everything_trigger-long-running-operation', arguments: { duration: 20, steps: 20 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).status === 'working', 'the call');
    await new Promise((resolve) => setTimeout(resolve, 1500));
    process.kill(pid, 'SIGKILL');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('failed');
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([
      {
        type: 'text',
        text: "The upstream MCP server 'everything' stopped during the call (its process exited or its connection closed); the call did not complete",
      },
    ]);
    await waitFor(() => upstreamPids(bridge, 'everything').length > first.length, 'the restarted server', 20_000);
    // Each process's stderr is in the bridge's log, line by line, with the server's name.
    const started = bridge.output().match(/"server":"everything","stderr":"Starting default \(STDIO\) server..."/g);
    expect(started?.length).toBe(upstreamPids(bridge, 'everything').length);
    const again = await client.callTool({ name: 'everything_get-sum', arguments: { a: 1, b: 1 } });
    expect(again.content).toEqual([{ type: 'text', text: 'The sum of 1 and 1 is 2.' }]);
  }, 60_000);

  it('/readyz and the metrics show the server up and count its calls by outcome, with their latency', async () => {
    const ready = await fetch(`http://127.0.0.1:${metricsPort}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', servers: { everything: 'up' } });
    const metrics = await scrape(`http://127.0.0.1:${metricsPort}/metrics`);
    const server = { server: 'everything' };
    expect(metrics.value('taskgate_upstream_up', server)).toBe(1);
    // The killed call is the one failure; the calls before it and the one after it succeeded.
    expect(metrics.value('taskgate_upstream_calls_total', { ...server, outcome: 'failed' })).toBe(1);
    const ok = metrics.value('taskgate_upstream_calls_total', { ...server, outcome: 'ok' });
    expect(ok).toBeGreaterThanOrEqual(5);
    expect(metrics.value('taskgate_upstream_call_duration_seconds_count', server)).toBe(ok + 1);
  });

  it('on SIGTERM the bridge lets the running call finish, then stops the server process', async () => {
    const client = await connect();
    const pid = upstreamPids(bridge, 'everything').at(-1) as number;
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'everything_trigger-long-running-operation', arguments: { duration: 2, steps: 2 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await waitFor(async () => (await client.experimental.tasks.getTask(taskId)).status === 'working', 'the call');
    process.kill(bridge.pid, 'SIGTERM');
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.content).toEqual([
      { type: 'text', text: 'Long running operation completed. Duration: 2 seconds, Steps: 2.' },
    ]);
    expect(await bridge.exited).toBe(0);
    const alive = (): boolean => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    await waitFor(() => !alive(), 'the server process to stop', 10_000);
  }, 60_000);
});
