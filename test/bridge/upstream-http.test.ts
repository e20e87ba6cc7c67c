import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, freePort } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import {
  type ExportedSpan,
  type Recorded,
  sdkClient,
  startEverythingHttp,
  startRecordingProxy,
  startSpanReceiver,
} from './upstream-support.js';

// The reference MCP server (@modelcontextprotocol/server-everything, from npm) over Streamable HTTP, behind a
// recording proxy (what the upstream receives, exactly), a bridge and two gateways.

const CLIENT_TOKEN = 'client-bearer-token-never-forwarded';
const UPSTREAM_KEY = 'upstream-key-from-the-environment';

let pods: Pods;
let bridge: ForkedProcess;
let configPath: string;
let upstream: { proc: ChildProcess; output: () => string } | undefined;
let proxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let receiver: Awaited<ReturnType<typeof startSpanReceiver>>;
/** The bridge's environment besides the pods': the upstream's key and OTLP export to `receiver`. */
let bridgeEnv: Record<string, string>;
let upstreamPort: number;
const clients: Client[] = [];

beforeAll(async () => {
  upstreamPort = await freePort();
  proxy = await startRecordingProxy(upstreamPort);
  receiver = await startSpanReceiver();
  bridgeEnv = {
    UPSTREAM_KEY,
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_BSP_SCHEDULE_DELAY: '100',
  };
  configPath = writeConfig({
    servers: [
      {
        name: 'remote',
        http: {
          url: `http://127.0.0.1:${proxy.port}/mcp`,
          // biome-ignore lint/suspicious/noTemplateCurlyInString: the config's reference to the bridge's environment
          headers: { 'X-Upstream-Key': '${UPSTREAM_KEY}' },
        },
        prefix: 'remote.',
      },
    ],
  });
  pods = await startPods(
    'upstream-http',
    { TASKGATE_CURSOR_SECRET: 'upstream-http-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '100' },
    async (env) => {
      bridge = await forkBridge({ ...env, ...bridgeEnv }, configPath);
      return bridge;
    },
  );
}, 90_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await bridge?.stop('SIGTERM', 5000);
  await pods?.stop();
  upstream?.proc.kill('SIGTERM');
  await proxy?.close();
  await receiver?.close();
  removeConfigs();
}, 60_000);

async function connect(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, capabilities, { Authorization: `Bearer ${CLIENT_TOKEN}` });
  clients.push(client);
  return client;
}

/** The JSON-RPC messages the upstream received with this method (and tool name). */
function received(method: string, tool?: string, from = 0): Recorded[] {
  return proxy.recorded.slice(from).filter((request) => {
    if (request.body === '') return false;
    const messages = [JSON.parse(request.body)].flat() as { method?: string; params?: { name?: string } }[];
    return messages.some(
      (message) => message.method === method && (tool === undefined || message.params?.name === tool),
    );
  });
}

describe('bridge servers: an MCP server over Streamable HTTP', () => {
  it('an upstream down at start: its tools are not offered; once it is up they are, and calls work', async () => {
    const client = await connect();
    expect((await client.listTools()).tools.filter((tool) => tool.name.startsWith('remote.'))).toEqual([]);
    await expect(client.callTool({ name: 'remote.get-sum', arguments: { a: 1, b: 2 } })).rejects.toThrow(
      /remote\.get-sum/,
    );
    upstream = await startEverythingHttp(upstreamPort);
    await waitFor(
      async () => (await client.listTools()).tools.some((tool) => tool.name === 'remote.simulate-research-query'),
      'the upstream tools',
      30_000,
    );
    const result = await client.callTool({ name: 'remote.get-sum', arguments: { a: 1, b: 2 } });
    expect(result.content).toEqual([{ type: 'text', text: 'The sum of 1 and 2 is 3.' }]);
  }, 60_000);

  it("never forwards the client's Authorization; the upstream gets only its config's headers", async () => {
    const client = await connect();
    const before = proxy.recorded.length;
    await client.callTool({ name: 'remote.echo', arguments: { message: 'hello' } });
    const seen = proxy.recorded.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    for (const request of proxy.recorded) {
      expect(JSON.stringify(request)).not.toContain(CLIENT_TOKEN);
      expect(request.headers.authorization).toBeUndefined();
      expect(request.headers['x-upstream-key']).toBe(UPSTREAM_KEY);
    }
  });

  it('one client span per upstream call, its traceparent forwarded to the upstream', async () => {
    const client = await connect();
    await client.callTool({ name: 'remote.get-sum', arguments: { a: 40, b: 2 } });
    const call = received('tools/call', 'get-sum').at(-1) as Recorded;
    const traceparent = String(call.headers.traceparent);
    const [, traceId, parentId] = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(traceparent) ?? [];
    expect(traceId).toBeDefined();
    let span: ExportedSpan | undefined;
    await waitFor(() => {
      span = receiver
        .spans()
        .find((exported) => exported.name === 'tools/call get-sum' && exported.traceId === traceId);
      return span !== undefined;
    }, 'the exported upstream call span');
    expect(span).toMatchObject({ spanId: parentId, kind: 3 });
  });

  it('cancelling the task cancels the upstream call', async () => {
    const client = await connect();
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'remote.trigger-long-running-operation', arguments: { duration: 30, steps: 30 }, task: {} },
      },
      CreateTaskResultSchema,
    );
    await waitFor(() => received('tools/call', 'trigger-long-running-operation').length > 0, 'the upstream call');
    await client.experimental.tasks.cancelTask(created.task.taskId);
    await waitFor(() => received('notifications/cancelled').length > 0, 'notifications/cancelled upstream');
    const cancelled = JSON.parse(received('notifications/cancelled')[0]?.body as string) as { params: unknown };
    const call = JSON.parse(received('tools/call', 'trigger-long-running-operation')[0]?.body as string) as {
      id: number;
    };
    expect(cancelled.params).toMatchObject({ requestId: call.id });
  });

  it('an upstream task that asks for input: the elicitation (by related task) reaches the client, its answer the upstream', async () => {
    const client = await connect({ elicitation: { form: {} } });
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { interpretation: 'programming' } };
    });
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'remote.simulate-research-query', arguments: { topic: 'python', ambiguous: true }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(asked).toEqual([
      'The research query "python" could have multiple interpretations. Please clarify what you\'re looking for:',
    ]);
    expect(JSON.stringify(result.content)).toContain('**Clarification**: programming');
  }, 60_000);

  it("the upstream's roots/list reaches the client during the call; its answer goes back", async () => {
    const client = await connect({ roots: {} });
    client.setRequestHandler(ListRootsRequestSchema, async () => ({
      roots: [{ uri: 'file:///srv/project', name: 'project' }],
    }));
    const result = await client.callTool({ name: 'remote.get-roots-list', arguments: {} });
    expect(JSON.stringify(result.content)).toContain('1. project\\n   URI: file:///srv/project');
  });

  it('runs simulate-research-query as an upstream task; a bridge killed -9 mid-task is replaced and the result arrives, the tool run once', async () => {
    const client = await connect();
    const from = proxy.recorded.length;
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'remote.simulate-research-query', arguments: { topic: 'durable tasks' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const taskId = created.task.taskId;
    await waitFor(() => received('tools/call', 'simulate-research-query', from).length > 0, 'the upstream task');
    await waitFor(
      () => received('tasks/result', undefined, from).length > 0,
      'the bridge waiting on the upstream task',
    );
    await bridge.stop('SIGKILL');
    bridge = await forkBridge({ ...pods.env, ...bridgeEnv }, configPath);
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result.isError).not.toBe(true);
    expect(JSON.stringify(result.content)).toContain('# Research Report: durable tasks');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('completed');
    // The upstream ran the tool once; the new bridge followed the same upstream task in the same session.
    expect(received('tools/call', 'simulate-research-query', from)).toHaveLength(1);
    const sessions = new Set(
      received('tasks/result', undefined, from).map((request) => request.headers['mcp-session-id']),
    );
    expect(sessions.size).toBe(1);
    expect(bridge.output()).toContain('following the upstream task after a restart');
  }, 90_000);

  it('a bridge that starts while the upstream is down offers its last listed tools; a call fails fast, clearly', async () => {
    await bridge.stop('SIGTERM', 10_000);
    upstream?.proc.kill('SIGTERM');
    await new Promise((resolve) => upstream?.proc.once('exit', resolve));
    bridge = await forkBridge({ ...pods.env, ...bridgeEnv }, configPath);
    const client = await connect();
    const names = (await client.listTools()).tools.map((tool) => tool.name);
    expect(names).toEqual(expect.arrayContaining(['remote.get-sum', 'remote.simulate-research-query']));
    const result = await client.callTool({ name: 'remote.get-sum', arguments: { a: 1, b: 1 } });
    expect(result).toEqual({
      content: [{ type: 'text', text: "The upstream MCP server 'remote' is not available" }],
      isError: true,
    });
    expect(bridge.output()).toContain('upstream down: its last listed tools are published');
  }, 60_000);
});
