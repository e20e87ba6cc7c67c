import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CreateMessageRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';
import { type ForkedProcess, forkNode } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../src/run.ts', import.meta.url));

/** Waits until the process printed a line matching `pattern`; returns the first capture group. */
async function waitForOutput(child: ForkedProcess, pattern: RegExp, timeoutMs = 20_000): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const match = pattern.exec(child.output());
    if (match !== null) return match[1] ?? match[0];
    if (Date.now() > deadline) throw new Error(`no ${pattern} in output:\n${child.output()}`);
    if (child.child.exitCode !== null) throw new Error(`process exited ${child.child.exitCode}:\n${child.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('taskgate dev (the README first command)', () => {
  let dir: string;
  let dev: ForkedProcess;
  let url: string;
  let redisUrl: string;
  let client: Client;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'taskgate-dev-'));
    const env = { PORT: '0', LOG_LEVEL: 'warn' };
    dev = forkNode(cli, ['dev'], env, { cwd: dir });
    url = await waitForOutput(dev, /MCP endpoint\s+(http:\/\/127\.0\.0\.1:\d+\/mcp)/);
    redisUrl = await waitForOutput(dev, /Redis\s+(redis:\/\/127\.0\.0\.1:\d+) \(private/);
    client = new Client({ name: 'dev-test', version: '1.0.0' }, { capabilities: { sampling: {} } });
    client.setRequestHandler(CreateMessageRequestSchema, async () => ({
      model: 'test-model',
      role: 'assistant',
      content: { type: 'text', text: 'A short summary.' },
    }));
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  }, 60_000);

  afterAll(async () => {
    await client?.close();
    await dev?.stop('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the example tools with their task support', async () => {
    const { tools } = await client.listTools();
    const support = Object.fromEntries(tools.map((tool) => [tool.name, tool.execution?.taskSupport]));
    expect(support).toEqual({
      ask_name: 'required',
      crash: 'optional',
      echo: 'forbidden',
      fail: 'optional',
      report: 'required',
      sleep: 'optional',
      summarize: 'optional',
    });
  });

  it('[TOOL-4] runs direct calls of echo, sleep, fail and summarize', async () => {
    expect(await client.callTool({ name: 'echo', arguments: { text: 'hi' } })).toEqual({
      content: [{ type: 'text', text: 'hi' }],
    });
    expect(await client.callTool({ name: 'sleep', arguments: { ms: 10 } })).toEqual({
      content: [{ type: 'text', text: 'slept 10 ms' }],
    });
    expect(await client.callTool({ name: 'fail', arguments: { message: 'no luck' } })).toEqual({
      content: [{ type: 'text', text: 'no luck' }],
      isError: true,
    });
    expect(await client.callTool({ name: 'summarize', arguments: { text: 'A long text.' } })).toEqual({
      content: [{ type: 'text', text: 'A short summary.' }],
    });
    const crash = await client
      .callTool({ name: 'crash', arguments: { code: -32099, message: 'boom' } })
      .catch((e) => e);
    expect(crash).toBeInstanceOf(McpError);
    expect(crash).toMatchObject({ code: -32099 });
  });

  it('[CRT-2] runs report as a task with progress in the status message', async () => {
    const messages = [];
    const stream = client.experimental.tasks.callToolStream(
      { name: 'report', arguments: { pages: 3, msPerPage: 20 } },
      undefined,
      { task: { ttl: 60_000 } },
    );
    for await (const message of stream) messages.push(message);
    expect(messages[0]?.type).toBe('taskCreated');
    expect(messages.at(-1)).toMatchObject({ type: 'result', result: { structuredContent: { pages: 3 } } });
    const taskId = messages[0]?.type === 'taskCreated' ? messages[0].task.taskId : '';
    expect(await client.experimental.tasks.getTask(taskId)).toMatchObject({
      status: 'completed',
      statusMessage: 'page 3 of 3',
      ttl: 60_000,
    });
  });

  it('stops everything on SIGTERM, its private Redis included', async () => {
    expect(await dev.stop('SIGTERM', 20_000)).toBe(0);
    const probe = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => {});
    await expect(probe.connect()).rejects.toThrow();
    probe.disconnect();
  });
});

describe('taskgate configuration errors', () => {
  const run = async (args: string[], env: Record<string, string>) => {
    const child = forkNode(cli, args, env);
    const code = await child.exited;
    return { code, output: child.output() };
  };

  it('refuses a gateway without a cursor secret, naming the variable and the flag', async () => {
    const { code, output } = await run(['gateway'], { TASKGATE_CURSOR_SECRET: '' });
    expect(code).toBe(2);
    expect(output).toContain('TASKGATE_CURSOR_SECRET (--cursor-secret) is required');
  });

  it('refuses to listen beyond loopback without authentication, and reports every problem at once', async () => {
    const { code, output } = await run(['gateway', '--host', '0.0.0.0', '--port', 'eighty'], {
      TASKGATE_CURSOR_SECRET: 'x'.repeat(32),
    });
    expect(code).toBe(2);
    expect(output).toContain('PORT (--port)');
    const second = await run(['gateway', '--host', '0.0.0.0'], { TASKGATE_CURSOR_SECRET: 'x'.repeat(32) });
    expect(second.code).toBe(2);
    expect(second.output).toContain('HOST=0.0.0.0 with TASKGATE_AUTH=none');
  });

  it('refuses token auth without tokens and a worker without tools', async () => {
    const tokens = await run(['gateway', '--auth', 'tokens'], { TASKGATE_CURSOR_SECRET: 'x'.repeat(32) });
    expect(tokens.code).toBe(2);
    expect(tokens.output).toContain('TASKGATE_AUTH=tokens needs TASKGATE_TOKENS_FILE');
    const worker = await run(['worker'], {});
    expect(worker.code).toBe(2);
    expect(worker.output).toContain('TASKGATE_TOOLS (--tools) names no module');
  });
});
