import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  McpError,
  ResourceUpdatedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { queueOfTask, shardQueues, ToolCatalog, ToolQueues } from '@taskgate/core';
import { type ForkedProcess, type RedisServer, startRedis } from '@taskgate/test-harness';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { forkBridge, forkLegacyWorker, removeConfigs, waitFor, writeConfig } from './support.js';
import { everythingStdio, sdkClient, upstreamPids } from './upstream-support.js';

// `allow` and `queueShards` of the bridge, with auth on: the reference MCP server (server-everything, stdio)
// for team A only, on three queue shards; a BullMQ queue's tool for bob only; two gateways, tokens auth.

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef';

let pods: Pods;
let legacy: RedisServer;
let legacyWorker: ForkedProcess;
let bridge: ForkedProcess;
let queues: ToolQueues;
const clients: Client[] = [];

beforeAll(async () => {
  legacy = await startRedis();
  legacyWorker = await forkLegacyWorker(legacy.url, 'greetings');
  const config = writeConfig({
    connections: { legacy: { url: legacy.url } },
    tools: [
      {
        name: 'greet',
        description: 'Greets.',
        taskSupport: 'optional',
        inputSchema: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] },
        queue: { name: 'greetings', prefix: 'legacy', connection: 'legacy' },
        job: { name: 'greet' },
        result: 'text',
        allow: ['bob'],
      },
    ],
    servers: [
      everythingStdio({
        allow: ['team-a/*'],
        queueShards: 3,
        tools: { include: ['get-sum', 'trigger-long-running-operation', 'toggle-subscriber-updates'] },
      }),
    ],
  });
  pods = await startPods(
    'upstream-allow',
    {
      TASKGATE_CURSOR_SECRET: 'upstream-allow-cursor-secret-0123456789',
      TASKGATE_POLL_INTERVAL_MS: '100',
      TASKGATE_AUTH: 'tokens',
      TASKGATE_TOKENS: `${ALICE}=team-a/alice,${BOB}=bob`,
    },
    async (env) => {
      bridge = await forkBridge(env, config);
      return bridge;
    },
  );
  queues = new ToolQueues({ connection: pods.redis, keys: pods.keys });
  const alice = await sdkClient(`${pods.proxy.origin}/mcp`, {}, { Authorization: `Bearer ${ALICE}` });
  await waitFor(
    async () => (await alice.listTools()).tools.some((tool) => tool.name === 'everything_get-sum'),
    'the upstream tools',
    60_000,
  );
  await alice.close();
}, 120_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await queues?.close();
  await legacyWorker?.stop('SIGTERM', 5000);
  await pods?.stop();
  await legacy?.stop();
  removeConfigs();
}, 60_000);

afterEach(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
});

async function connect(token: string): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, {}, { Authorization: `Bearer ${token}` });
  clients.push(client);
  return client;
}

async function refusal(promise: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof McpError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('expected a refusal');
}

const names = async (client: Client) => (await client.listTools()).tools.map((tool) => tool.name).sort();

describe('bridge: allow on servers and tools, queueShards on servers', () => {
  it("a principal outside a server's allow neither lists nor calls its tools; one inside does", async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    expect(await names(alice)).toEqual([
      'everything_get-sum',
      'everything_toggle-subscriber-updates',
      'everything_trigger-long-running-operation',
    ]);
    expect(await names(bob)).toEqual(['greet']);
    expect(await alice.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3 } })).toEqual({
      content: [{ type: 'text', text: 'The sum of 2 and 3 is 5.' }],
    });
    expect(await bob.callTool({ name: 'greet', arguments: { n: 4 } })).toEqual({
      content: [{ type: 'text', text: 'hello 4' }],
    });
    // Each gets what an unknown tool gets, whether the call asks for a task or not.
    const unknown = await refusal(bob.callTool({ name: 'everything_no-such-tool', arguments: {} }));
    const hidden = await refusal(bob.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3 } }));
    expect(hidden).toEqual({
      code: -32602,
      message: "MCP error -32602: Unknown tool: 'everything_get-sum'. Call tools/list to see the available tools.",
    });
    expect(unknown.message.replace('everything_no-such-tool', 'everything_get-sum')).toBe(hidden.message);
    const asTask = await refusal(
      bob.request(
        { method: 'tools/call', params: { name: 'everything_get-sum', arguments: { a: 1, b: 1 }, task: {} } },
        CreateTaskResultSchema,
      ),
    );
    expect(asTask).toEqual(hidden);
    expect(await refusal(alice.callTool({ name: 'greet', arguments: { n: 4 } }))).toEqual({
      code: -32602,
      message: "MCP error -32602: Unknown tool: 'greet'. Call tools/list to see the available tools.",
    });
  });

  it("shows the server's resources and templates only to the principals of its allow", async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const resources = (await alice.listResources()).resources;
    expect(resources.length).toBeGreaterThan(0);
    expect(resources.every((resource) => resource.name.startsWith('everything_'))).toBe(true);
    expect((await alice.listResourceTemplates()).resourceTemplates.length).toBeGreaterThan(0);
    expect((await alice.listPrompts()).prompts.length).toBeGreaterThan(0);
    expect((await bob.listResources()).resources).toEqual([]);
    expect((await bob.listResourceTemplates()).resourceTemplates).toEqual([]);
    expect((await bob.listPrompts()).prompts).toEqual([]);
    const uri = (resources[0] as { uri: string }).uri;
    expect((await alice.readResource({ uri })).contents[0]).toMatchObject({ uri });
    const refused = await refusal(bob.readResource({ uri }));
    expect(refused.code).toBe(-32002);
    expect(refused.message).toBe(
      `MCP error -32002: Resource not found: ${uri}. Call resources/list and resources/templates/list to see what can be read.`,
    );
  });

  it("runs the server's tools over its three queue shards, each task on the shard its id picks", async () => {
    const catalog = new ToolCatalog({ redis: pods.redis, keys: pods.keys });
    expect((await catalog.get('everything_trigger-long-running-operation'))?.queueShards).toBe(3);
    const alice = await connect(ALICE);
    const taskIds = await Promise.all(
      Array.from({ length: 9 }, async () => {
        const created = await alice.request(
          {
            method: 'tools/call',
            params: {
              name: 'everything_trigger-long-running-operation',
              arguments: { duration: 1, steps: 2 },
              task: {},
            },
          },
          CreateTaskResultSchema,
        );
        return created.task.taskId;
      }),
    );
    const used = new Set<string>();
    for (const taskId of taskIds) {
      const queue = queueOfTask('upstream.everything', 3, taskId);
      used.add(queue);
      expect((await queues.queue(queue).getJob(taskId))?.id).toBe(taskId);
    }
    expect(used.size).toBeGreaterThan(1);
    expect([...used].every((queue) => shardQueues('upstream.everything', 3).includes(queue))).toBe(true);
    for (const taskId of taskIds) {
      const result = await alice.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
      expect(result.content).toEqual([
        { type: 'text', text: 'Long running operation completed. Duration: 1 seconds, Steps: 2.' },
      ]);
    }
  });

  it('list_changed still reaches the sessions when the server comes back; the lists stay per principal', async () => {
    const alice = await connect(ALICE);
    const bob = await connect(BOB);
    const heard = { alice: 0, bob: 0 };
    alice.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.alice++);
    bob.setNotificationHandler(ToolListChangedNotificationSchema, () => void heard.bob++);
    // The GET streams open shortly after connecting; a list round trip on each gives them time.
    await Promise.all([names(alice), names(bob)]);
    await new Promise((resolve) => setTimeout(resolve, 500));
    const before = upstreamPids(bridge, 'everything');
    process.kill(before.at(-1) as number, 'SIGKILL');
    await waitFor(() => upstreamPids(bridge, 'everything').length > before.length, 'the restarted server', 30_000);
    await waitFor(() => heard.alice > 0 && heard.bob > 0, 'tools/list_changed on both sessions', 30_000);
    expect(await names(alice)).toContain('everything_get-sum');
    expect(await names(bob)).toEqual(['greet']);
  });

  it('a subscription to an upstream resource subscribes upstream and relays its updates; unsubscribing ends it', async () => {
    const uri = 'demo://resource/dynamic/text/1';
    const alice = await connect(ALICE);
    const updates: string[] = [];
    alice.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    expect((await refusal((await connect(BOB)).subscribeResource({ uri }))).code).toBe(-32002);
    const held = (count: number) =>
      new RegExp(`"server":"everything","held":${count}[^\\n]*upstream resource subscriptions updated`);
    const before = (bridge.output().match(new RegExp(held(1).source, 'g')) ?? []).length;
    await alice.subscribeResource({ uri });
    await waitFor(
      () => (bridge.output().match(new RegExp(held(1).source, 'g')) ?? []).length > before,
      'the upstream subscription',
      15_000,
    );
    // The server sends updates of what its session subscribed to once this tool is called, then every 5 s.
    await alice.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
    await waitFor(() => updates.length > 0, 'an update relayed from the upstream', 20_000);
    expect(new Set(updates)).toEqual(new Set([uri]));
    const dropped = (bridge.output().match(new RegExp(held(0).source, 'g')) ?? []).length;
    await alice.unsubscribeResource({ uri });
    await waitFor(
      () => (bridge.output().match(new RegExp(held(0).source, 'g')) ?? []).length > dropped,
      'the upstream unsubscription',
      15_000,
    );
    await alice.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
  });

  it('2026-07-28: a subscriptions/listen stream of an upstream resource gets its updates while it is open', async () => {
    const uri = 'demo://resource/dynamic/text/2';
    const count = (held: number) =>
      (
        bridge
          .output()
          .match(
            new RegExp(`"server":"everything","held":${held}[^\\n]*upstream resource subscriptions updated`, 'g'),
          ) ?? []
      ).length;
    const [ones, zeros] = [count(1), count(0)];
    const stream = await openListen(ALICE, { resourceSubscriptions: [uri] });
    try {
      await waitFor(() => count(1) > ones, 'the upstream subscription', 15_000);
      const alice = await connect(ALICE);
      await alice.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
      const events = await stream.until((event) => event.method === 'notifications/resources/updated');
      expect(events.at(-1)).toMatchObject({
        method: 'notifications/resources/updated',
        params: { uri, _meta: { 'io.modelcontextprotocol/subscriptionId': 'listen-1' } },
      });
      await alice.callTool({ name: 'everything_toggle-subscriber-updates', arguments: {} });
    } finally {
      stream.close();
    }
    await waitFor(() => count(0) > zeros, 'the upstream unsubscription', 15_000);
  });
});

/** Opens a 2026-07-28 `subscriptions/listen` stream as the token's principal; `until` reads up to a match. */
async function openListen(token: string, notifications: Record<string, unknown>) {
  const controller = new AbortController();
  const response = await fetch(`${pods.proxy.origin}/mcp`, {
    method: 'POST',
    signal: controller.signal,
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': 'subscriptions/listen',
      Authorization: `Bearer ${token}`,
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 'listen-1',
      method: 'subscriptions/listen',
      params: {
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {},
        },
        notifications,
      },
    }),
  });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const events: Record<string, unknown>[] = [];
  let buffer = '';
  const until = async (match: (event: Record<string, unknown>) => boolean): Promise<Record<string, unknown>[]> => {
    while (!events.some(match)) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended after ${JSON.stringify(events)}`);
      buffer += new TextDecoder().decode(value);
      const lines = buffer.split('\n');
      buffer = lines.pop() ?? '';
      for (const line of lines) if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)));
    }
    return events;
  };
  return { until, close: () => controller.abort() };
}
