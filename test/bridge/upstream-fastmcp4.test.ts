import type { ChildProcess } from 'node:child_process';
import { Client as ClientV2, StreamableHTTPClientTransport as TransportV2 } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CallToolResultSchema,
  CreateTaskResultSchema,
  ElicitRequestSchema,
  type Progress,
} from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, freePort } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { ensureFastmcp4Python, FASTMCP4_SCRIPT, startFastmcp4Http } from './fastmcp4-support.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import { sdkClient, upstreamPids } from './upstream-support.js';

// A Python MCP server nobody here wrote the framework of: FastMCP 4 with fastmcp-tasks (PyPI, pinned in
// scripts/lib/tools.sh, in a venv under the ignored .tools/), over stdio behind a bridge and two gateways. The
// bridge reaches it twice: `fm` with `protocolVersion: auto` (it offers 2026-07-28, so the bridge is a 2026
// client) and `fm25` pinned to 2025-11-25, the revision on which FastMCP 4's `ctx.elicit` asks for input.

let pods: Pods;
let bridge: ForkedProcess;
let configPath: string;
/** The same server over Streamable HTTP (`fmh`): its tasks outlive a bridge, and its stderr is read here. */
let http: { proc: ChildProcess; output: () => string } | undefined;
const clients: { close(): Promise<void> }[] = [];

beforeAll(async () => {
  const python = await ensureFastmcp4Python();
  const stdio = { command: python, args: [FASTMCP4_SCRIPT] };
  const port = await freePort();
  http = await startFastmcp4Http(python, port);
  configPath = writeConfig({
    servers: [
      { name: 'fm', stdio },
      { name: 'fm25', stdio, protocolVersion: '2025-11-25' },
      { name: 'fmh', http: { url: `http://127.0.0.1:${port}/mcp` }, tools: { include: ['slow'] } },
    ],
  });
  pods = await startPods(
    'upstream-fastmcp4',
    { TASKGATE_CURSOR_SECRET: 'upstream-fastmcp4-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '100' },
    async (env) => {
      bridge = await forkBridge(env, configPath);
      return bridge;
    },
  );
  const client = await connect();
  await waitFor(
    async () => {
      const names = (await client.listTools()).tools.map((tool) => tool.name);
      return names.includes('fm_greet') && names.includes('fm25_greet_rev2025_11_25') && names.includes('fmh_slow');
    },
    'the FastMCP tools',
    60_000,
  );
}, 240_000);

afterAll(async () => {
  await Promise.all(clients.map((client) => client.close().catch(() => {})));
  // The bridge that replaced the killed one, with its stdio servers: stopped here, not left to the process exit.
  await bridge?.stop('SIGTERM', 20_000);
  await pods?.stop();
  http?.proc.kill('SIGTERM');
  removeConfigs();
}, 60_000);

async function connect(capabilities: Record<string, unknown> = {}): Promise<Client> {
  const client = await sdkClient(`${pods.proxy.origin}/mcp`, capabilities);
  clients.push(client);
  return client;
}

/** A 2026-07-28 client of the gateways (SDK v2), answering elicitations with `name`. */
async function connect2026(name: string): Promise<ClientV2> {
  const client = new ClientV2(
    { name: 'fastmcp4-test', version: '1.0.0' },
    { capabilities: { elicitation: {} }, versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  client.setRequestHandler('elicitation/create', async () => ({ action: 'accept' as const, content: { name } }));
  await client.connect(new TransportV2(new URL(`${pods.proxy.origin}/mcp`)));
  clients.push(client);
  return client;
}

/** What the bridge logged of the server's stderr (`slow` notes its start, end and cancellation there). */
function stderrOf(server: string): string[] {
  const pattern = new RegExp(`"server":"${server}","stderr":"([^"]*)"`, 'g');
  return [...bridge.output().matchAll(pattern)].map((match) => String(match[1]));
}

const text = (result: unknown): string =>
  ((result as { content?: { text?: string }[] }).content ?? []).map((block) => block.text ?? '').join('');

describe('bridge servers: FastMCP 4 (Python) over stdio, on 2026-07-28 and pinned to 2025-11-25', () => {
  it('lists its tools under each prefix; auto negotiates 2026-07-28, the pinned server 2025-11-25', async () => {
    const client = await connect();
    const names = (await client.listTools()).tools
      .map((tool) => tool.name)
      .filter((name) => name.startsWith('fm_') || name.startsWith('fm25_'));
    const upstream = ['echo', 'greet', 'greet_rev2025_11_25', 'revision', 'slow', 'steps'];
    expect(names.sort()).toEqual([...upstream.map((name) => `fm25_${name}`), ...upstream.map((name) => `fm_${name}`)]);
    expect(bridge.output()).toMatch(
      /"server":"fm","upstreamPid":\d+[^\n]*"protocolVersion":"2026-07-28"[^\n]*"upstream up"/,
    );
    expect(bridge.output()).toMatch(
      /"server":"fm25","upstreamPid":\d+[^\n]*"protocolVersion":"2025-11-25"[^\n]*"upstream up"/,
    );
    // Each server's one process; the connection each call came on says its revision.
    expect(upstreamPids(bridge, 'fm')).toHaveLength(1);
    expect(text(await client.callTool({ name: 'fm_revision', arguments: {} }))).toBe('2026-07-28');
    expect(text(await client.callTool({ name: 'fm25_revision', arguments: {} }))).toBe('2025-11-25');
    const echoed = await client.callTool({ name: 'fm_echo', arguments: { text: 'unchanged' } });
    expect(echoed.content).toEqual([{ type: 'text', text: 'unchanged' }]);
  });

  it('runs a call as a task on 2026-07-28 with every progress step and the upstream result', async () => {
    const client = await connect();
    const progress: Progress[] = [];
    let result: unknown;
    for await (const message of client.experimental.tasks.callToolStream(
      { name: 'fm_steps', arguments: { count: 4 } },
      CallToolResultSchema,
      { task: {}, onprogress: (update) => progress.push(update) },
    )) {
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result;
    }
    expect(result).toMatchObject({ content: [{ type: 'text', text: '4 steps' }] });
    expect(progress.map((step) => [step.progress, step.total])).toEqual([
      [1, 4],
      [2, 4],
      [3, 4],
      [4, 4],
    ]);
  });

  it('follows an upstream task (tasks extension) to its result; the tool ran once', async () => {
    const client = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'fm_slow', arguments: { ms: 1200, tag: 'followed' }, task: {} } },
      CreateTaskResultSchema,
    );
    // The upstream created a task: its id is stored with the taskgate task while the bridge follows it.
    const key = `${pods.keys.task(created.task.taskId)}:upstream`;
    await waitFor(
      async () => ((await pods.redis.hget(key, 'upstreamTaskId')) ?? '') !== '',
      'the upstream task id',
      30_000,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'slept 1200 ms (followed)' }]);
    expect(stderrOf('fm').filter((line) => line === 'slow started followed')).toHaveLength(1);
    // The bridge stored the upstream task's id with the taskgate task while it followed it, and forgot it after.
    expect(await pods.redis.hgetall(key)).toEqual({});
    expect(bridge.output()).not.toContain('following the upstream task after a restart');
  });

  it("the upstream's input_required reaches a 2026-07-28 client, and its answer goes back in inputResponses", async () => {
    const client = await connect2026('Ada');
    const result = await client.callTool({ name: 'fm_greet', arguments: {} });
    expect(result.content).toEqual([{ type: 'text', text: 'Hello, Ada!' }]);
    // A 2025-11-25 client of a task gets the same question as an elicitation request.
    const v1 = await connect({ elicitation: { form: {} } });
    const asked: string[] = [];
    v1.setRequestHandler(ElicitRequestSchema, async (request) => {
      asked.push(request.params.message);
      return { action: 'accept', content: { name: 'Grace' } };
    });
    const created = await v1.request(
      { method: 'tools/call', params: { name: 'fm_greet', arguments: {}, task: {} } },
      CreateTaskResultSchema,
    );
    const greeted = await v1.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(greeted.content).toEqual([{ type: 'text', text: 'Hello, Grace!' }]);
    expect(asked).toEqual(['What is your name?']);
  });

  it('cancelling the task cancels the upstream task (tasks/cancel on 2026-07-28)', async () => {
    const client = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'fm_slow', arguments: { ms: 30_000, tag: 'cancel' }, task: {} } },
      CreateTaskResultSchema,
    );
    await waitFor(() => stderrOf('fm').includes('slow started cancel'), 'the upstream call');
    await client.experimental.tasks.cancelTask(created.task.taskId);
    await waitFor(() => stderrOf('fm').includes('slow cancelled cancel'), 'the upstream cancelled');
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('cancelled');
    expect(stderrOf('fm')).not.toContain('slow finished cancel');
  });

  it('keeps the HTTP server up: its session is checked with server/discover (2026-07-28 has no ping)', async () => {
    await new Promise((resolve) => setTimeout(resolve, 5000));
    expect(bridge.output()).not.toMatch(/"server":"fmh"[^\n]*"upstream down"/);
  });

  it('protocolVersion 2025-11-25 pins the revision on which ctx.elicit asks; on 2026-07-28 FastMCP refuses it', async () => {
    const client = await connect2026('Lin');
    const pinned = await client.callTool({ name: 'fm25_greet_rev2025_11_25', arguments: {} });
    expect(pinned.content).toEqual([{ type: 'text', text: 'Hello, Lin!' }]);
    const refused = await client.callTool({ name: 'fm_greet_rev2025_11_25', arguments: {} });
    expect(refused.isError).toBe(true);
    expect(text(refused)).toMatch(/2026-07-28/);
  });
  it('a bridge killed -9 while it follows an HTTP upstream task is replaced: the result arrives, the tool ran once', async () => {
    const client = await connect();
    const created = await client.request(
      { method: 'tools/call', params: { name: 'fmh_slow', arguments: { ms: 6000, tag: 'crash' }, task: {} } },
      CreateTaskResultSchema,
    );
    const key = `${pods.keys.task(created.task.taskId)}:upstream`;
    await waitFor(
      async () => ((await pods.redis.hget(key, 'upstreamTaskId')) ?? '') !== '',
      'the upstream task id',
      30_000,
    );
    await bridge.stop('SIGKILL');
    bridge = await forkBridge(pods.env, configPath);
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect(result.content).toEqual([{ type: 'text', text: 'slept 6000 ms (crash)' }]);
    expect(bridge.output()).toContain('following the upstream task after a restart');
    const output = http?.output() ?? '';
    expect(output.match(/slow started crash/g)).toHaveLength(1);
  }, 90_000);
});
