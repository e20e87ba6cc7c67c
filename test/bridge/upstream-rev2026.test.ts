import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, forkNode, freePort } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods, waitForOutput } from '../gateway/fixtures/processes.js';
import { ensureFastmcp4Python, startFastmcp4Http } from './fastmcp4-support.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import { type Recorded, sdkClient, startRecordingProxy } from './upstream-support.js';

// Two 2026-07-28 upstreams behind a bridge, each behind a recording proxy (what the upstream receives): another
// taskgate deployment (`tg`: two gateways and a worker with `stages`, `post` and the resource board://status),
// which serves subscriptions/listen with the tasks extension's taskIds; and FastMCP 4 with fastmcp-tasks over
// HTTP (`fmh`), which serves no subscriptions/listen (its server/discover announces no list changes and no
// resource subscriptions), so its tasks are polled.

const WORKER = fileURLToPath(new URL('./fixtures/rev2026-upstream-worker.ts', import.meta.url));
const BOARD = 'board://status';
const POLL = { TASKGATE_POLL_INTERVAL_MS: '100' };

let upstream: Pods;
let pods: Pods;
let bridge: ForkedProcess;
let fastmcp: { proc: ChildProcess; output: () => string } | undefined;
let tgProxy: Awaited<ReturnType<typeof startRecordingProxy>>;
let fmProxy: Awaited<ReturnType<typeof startRecordingProxy>>;
const clients: Client[] = [];

beforeAll(async () => {
  const python = await ensureFastmcp4Python();
  const fmPort = await freePort();
  fastmcp = await startFastmcp4Http(python, fmPort);
  fmProxy = await startRecordingProxy(fmPort);
  upstream = await startPods(
    'upstream-rev2026-up',
    { ...POLL, TASKGATE_CURSOR_SECRET: 'upstream-rev2026-up-cursor-secret-0123456789' },
    async (env) => {
      const proc = forkNode(WORKER, [], env);
      await waitForOutput(proc, /worker ready/);
      return proc;
    },
  );
  tgProxy = await startRecordingProxy(Number(new URL(upstream.proxy.origin).port));
  const configPath = writeConfig({
    servers: [
      { name: 'tg', http: { url: `http://127.0.0.1:${tgProxy.port}/mcp` }, protocolVersion: '2026-07-28' },
      { name: 'fmh', http: { url: `http://127.0.0.1:${fmProxy.port}/mcp` }, tools: { include: ['slow'] } },
    ],
  });
  pods = await startPods(
    'upstream-rev2026',
    { ...POLL, TASKGATE_CURSOR_SECRET: 'upstream-rev2026-cursor-secret-0123456789' },
    async (env) => {
      bridge = await forkBridge(env, configPath);
      return bridge;
    },
  );
  const client = await connect();
  await waitFor(
    async () => {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      return names.includes('tg_stages') && names.includes('tg_post') && names.includes('fmh_slow');
    },
    'the upstream tools',
    60_000,
  );
}, 240_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  await pods?.stop();
  await upstream?.stop();
  await tgProxy?.close();
  await fmProxy?.close();
  fastmcp?.proc.kill('SIGTERM');
  removeConfigs();
}, 60_000);

async function connect(): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`);
  clients.push(client);
  return client;
}

/** The JSON-RPC requests among `recorded` (from index `from`) of `method`. */
function requests(recorded: readonly Recorded[], method: string, from = 0): Record<string, unknown>[] {
  return recorded
    .slice(from)
    .filter((request) => request.body !== '')
    .flatMap((request) => [JSON.parse(request.body)].flat() as Record<string, unknown>[])
    .filter((message) => message.method === method);
}

/**
 * Calls `name` as a task and reads the task every 50 ms until it ends: every statusMessage it showed while it
 * worked, in order, and its result.
 */
async function runWatched(client: Client, name: string, args: Record<string, unknown>) {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  const taskId = created.task.taskId;
  const shown: string[] = [];
  for (;;) {
    const task = await client.experimental.tasks.getTask(taskId);
    if (task.status !== 'working') break;
    if (task.statusMessage !== undefined && shown.at(-1) !== task.statusMessage) shown.push(task.statusMessage);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
  return { shown, result };
}

describe('bridge servers on 2026-07-28: upstream tasks and resource subscriptions through subscriptions/listen', () => {
  it("follows an upstream task through subscriptions/listen: each stage's statusMessage reaches the client", async () => {
    const client = await connect();
    const from = tgProxy.recorded.length;
    const { shown, result } = await runWatched(client, 'tg_stages', { count: 3, ms: 1000 });
    expect(result.content).toEqual([{ type: 'text', text: '3 stages' }]);
    // Stage 3 is the last step before the result; the client may or may not read it in between.
    expect(shown.slice(0, 2)).toEqual(['stage 1 of 3', 'stage 2 of 3']);
    expect(shown.every((message) => /^stage [123] of 3$/.test(message))).toBe(true);
    // The bridge listened to the upstream task's notifications/tasks (tasks extension declared) ...
    const [call] = requests(tgProxy.recorded, 'tools/call', from);
    const listens = requests(tgProxy.recorded, 'subscriptions/listen', from);
    expect(listens).toHaveLength(1);
    const listen = listens[0]?.params as { notifications: { taskIds: string[] }; _meta: Record<string, unknown> };
    expect(listen.notifications.taskIds).toHaveLength(1);
    expect(listen._meta['io.modelcontextprotocol/clientCapabilities']).toMatchObject({
      extensions: { 'io.modelcontextprotocol/tasks': {} },
    });
    expect(call?.params).toMatchObject({ name: 'stages' });
    // ... instead of polling it: one tasks/get when the stream opened, none for 3 s of stages (polling: ≥ 6).
    const gets = requests(tgProxy.recorded, 'tasks/get', from);
    expect(gets.length).toBeGreaterThanOrEqual(1);
    expect(gets.length).toBeLessThanOrEqual(2);
    expect(gets.map((get) => (get.params as { taskId: string }).taskId)).toEqual(
      gets.map(() => listen.notifications.taskIds[0]),
    );
  });

  it('cancelling a task followed through subscriptions/listen cancels the upstream task and ends the stream', async () => {
    const client = await connect();
    const from = tgProxy.recorded.length;
    const created = await client.request(
      { method: 'tools/call', params: { name: 'tg_stages', arguments: { count: 10, ms: 1000 }, task: {} } },
      CreateTaskResultSchema,
    );
    const record = `${pods.keys.task(created.task.taskId)}:upstream`;
    let upstreamTaskId = '';
    await waitFor(
      async () => {
        upstreamTaskId = (await pods.redis.hget(record, 'upstreamTaskId')) ?? '';
        return upstreamTaskId !== '' && requests(tgProxy.recorded, 'subscriptions/listen', from).length > 0;
      },
      'the upstream task, listened to',
      30_000,
    );
    await client.experimental.tasks.cancelTask(created.task.taskId);
    const status = () => upstream.redis.hget(upstream.keys.task(upstreamTaskId), 'status');
    await waitFor(async () => (await status()) === 'cancelled', 'the upstream task cancelled', 15_000);
    const [listen] = requests(tgProxy.recorded, 'subscriptions/listen', from);
    await waitFor(
      () =>
        requests(tgProxy.recorded, 'notifications/cancelled', from).some(
          (message) => (message.params as { requestId?: unknown }).requestId === listen?.id,
        ),
      'the listen stream ended',
    );
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
    expect(requests(tgProxy.recorded, 'tasks/cancel', from).map((message) => message.params)).toEqual([
      expect.objectContaining({ taskId: upstreamTaskId }),
    ]);
    // The HTTP session the call used closes right after: the bridge lives on, and serves the next call.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(() => process.kill(bridge.pid, 0)).not.toThrow();
    expect(await client.callTool({ name: 'tg_post', arguments: { text: 'after the cancel' } })).toMatchObject({
      content: [{ type: 'text', text: 'posted' }],
    });
  });

  it('falls back to polling tasks/get where the server serves no subscriptions/listen; its statusMessage arrives', async () => {
    const client = await connect();
    const from = fmProxy.recorded.length;
    // FastMCP shows a task's last progress message in tasks/get and asks to be polled every 5 s (pollIntervalMs),
    // which the bridge does: a step every 4 s, polls 5 s apart, so at least two of them see different steps.
    const { shown, result } = await runWatched(client, 'fmh_slow', { ms: 16_000, tag: 'polled' });
    expect(result.content).toEqual([{ type: 'text', text: 'slept 16000 ms (polled)' }]);
    expect(shown.length).toBeGreaterThanOrEqual(2);
    expect(shown.every((message) => /^step [1-4] of 4$/.test(message))).toBe(true);
    expect(requests(fmProxy.recorded, 'subscriptions/listen', from)).toEqual([]);
    expect(requests(fmProxy.recorded, 'tasks/get', from).length).toBeGreaterThanOrEqual(3);
  }, 60_000);

  it("relays a client's resources/subscribe of the upstream's resource: its updates arrive; unsubscribing ends it", async () => {
    const client = await connect();
    const updates: string[] = [];
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (notification) => {
      updates.push(notification.params.uri);
    });
    const held = (count: number) =>
      (
        bridge
          .output()
          .match(new RegExp(`"server":"tg","held":${count}[^\\n]*upstream resource subscriptions updated`, 'g')) ?? []
      ).length;
    const from = tgProxy.recorded.length;
    const [ones, zeros] = [held(1), held(0)];
    await client.subscribeResource({ uri: BOARD });
    await waitFor(() => held(1) > ones, 'the upstream subscription', 15_000);
    const listen = requests(tgProxy.recorded, 'subscriptions/listen', from).at(-1);
    expect(listen?.params).toMatchObject({ notifications: { resourceSubscriptions: [BOARD] } });
    expect(await client.callTool({ name: 'tg_post', arguments: { text: 'first' } })).toMatchObject({
      content: [{ type: 'text', text: 'posted' }],
    });
    await waitFor(() => updates.length > 0, 'the update relayed from the upstream', 20_000);
    expect(updates).toEqual([BOARD]);
    const read = await client.readResource({ uri: BOARD });
    expect(read.contents).toEqual([expect.objectContaining({ uri: BOARD, text: 'first' })]);
    await client.unsubscribeResource({ uri: BOARD });
    await waitFor(() => held(0) > zeros, 'the upstream unsubscription', 15_000);
    // The stream that held the subscription was ended upstream.
    const listenId = (listen as { id: string }).id;
    const cancelled = requests(tgProxy.recorded, 'notifications/cancelled', from);
    expect(cancelled.map((message) => (message.params as { requestId: unknown }).requestId)).toContain(listenId);
  });
});
