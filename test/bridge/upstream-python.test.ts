import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { ForkedProcess } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from './support.js';
import { sdkClient } from './upstream-support.js';

// A Python MCP server nobody here wrote: mcp-server-time (PyPI, pinned in scripts/lib/tools.sh, in a venv under
// the ignored .tools/), over stdio behind a bridge and two gateways.

const root = fileURLToPath(new URL('../../', import.meta.url));
let pods: Pods;
let bridge: ForkedProcess;
let client: Client;
/** What mcp-server-time itself answers for an unknown timezone. */
const UPSTREAM_ERROR =
  "Error executing tool get_current_time: Invalid timezone: 'No time zone found with key Not/AZone'";

/** The pinned server's executable; installs it (once, cached) when missing. */
async function ensureTimeServer(): Promise<string> {
  const script = 'source scripts/lib/tools.sh && ensure_mcp_server_time && echo "$TASKGATE_TOOLS_DIR/mcp-time-venv"';
  const { stdout } = await promisify(execFile)('bash', ['-c', script], { cwd: root });
  return `${stdout.trim().split('\n').at(-1)}/bin/mcp-server-time`;
}

beforeAll(async () => {
  const command = await ensureTimeServer();
  const config = writeConfig({
    servers: [{ name: 'time', stdio: { command, args: ['--local-timezone', 'UTC'] }, taskSupport: 'required' }],
  });
  pods = await startPods(
    'upstream-python',
    { TASKGATE_CURSOR_SECRET: 'upstream-python-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '100' },
    async (env) => {
      bridge = await forkBridge(env, config);
      return bridge;
    },
  );
  client = await sdkClient(`${pods.proxy.origin}/mcp`);
}, 180_000);

afterAll(async () => {
  await client?.close().catch(() => {});
  await pods?.stop();
  removeConfigs();
}, 60_000);

describe('bridge servers: a Python MCP server (mcp-server-time) over stdio', () => {
  it('lists its tools under the prefix, required as tasks, and runs one as a task with its result unchanged', async () => {
    let tools: Awaited<ReturnType<Client['listTools']>>['tools'] = [];
    await waitFor(async () => {
      tools = (await client.listTools()).tools;
      return tools.some((tool) => tool.name === 'time_convert_time');
    }, 'the time tools');
    expect(tools.map((tool) => tool.name).sort()).toEqual(['time_convert_time', 'time_get_current_time']);
    const current = tools.find((tool) => tool.name === 'time_get_current_time');
    expect(current?.execution).toEqual({ taskSupport: 'required' });
    expect(current?.inputSchema).toMatchObject({ type: 'object', required: ['timezone'] });

    let result: { content?: { type: string; text?: string }[] } | undefined;
    for await (const message of client.experimental.tasks.callToolStream(
      {
        name: 'time_convert_time',
        arguments: { source_timezone: 'Europe/Paris', time: '12:30', target_timezone: 'Asia/Tokyo' },
      },
      CallToolResultSchema,
      { task: {} },
    )) {
      if (message.type === 'error') throw message.error;
      if (message.type === 'result') result = message.result;
    }
    const text = result?.content?.[0]?.text as string;
    const converted = JSON.parse(text) as { source: { timezone: string }; target: { timezone: string } };
    expect(converted.source.timezone).toBe('Europe/Paris');
    expect(converted.target.timezone).toBe('Asia/Tokyo');
  });

  it("the server's own error reaches the client as it sent it", async () => {
    const created = await client.request(
      {
        method: 'tools/call',
        params: { name: 'time_get_current_time', arguments: { timezone: 'Not/AZone' }, task: {} },
      },
      CreateTaskResultSchema,
    );
    const result = await client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema);
    expect((await client.experimental.tasks.getTask(created.task.taskId)).status).toBe('failed');
    expect(result).toMatchObject({ content: [{ type: 'text', text: UPSTREAM_ERROR }], isError: true });
  });
});
