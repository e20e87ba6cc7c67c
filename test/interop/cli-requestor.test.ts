import { createServer, type Server as HttpServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { tools as exampleTools } from '@taskgate/examples';
import { createGateway } from '@taskgate/gateway';
import { forkNode, useRedis } from '@taskgate/test-harness';
import { createWorker } from '@taskgate/worker';
import { describe, expect, it } from 'vitest';

// `taskgate call` is taskgate's own requestor. It must ask for a task only when the server declared task
// support for tools/call (CAP-2, TOOL-2), and otherwise still get the tool's result with a plain call.

const cli = new URL('../../packages/cli/src/run.ts', import.meta.url).pathname;

function body(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.on('data', (chunk: Buffer) => {
      text += chunk.toString();
    });
    req.on('end', () => resolve(text === '' ? undefined : JSON.parse(text)));
    req.on('error', reject);
  });
}

/** A stateless MCP server (the SDK's own) that offers tools but no tasks; records every tools/call it gets. */
async function serverWithoutTasks(): Promise<{ url: string; calls: unknown[]; http: HttpServer }> {
  const calls: unknown[] = [];
  const http = createServer(async (req, res) => {
    const message = req.method === 'POST' ? await body(req) : undefined;
    const server = new Server({ name: 'no-tasks', version: '1.0.0' }, { capabilities: { tools: {} } });
    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: [{ name: 'echo', description: 'Echoes', inputSchema: { type: 'object' } }],
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request) => {
      calls.push(request.params);
      return { content: [{ type: 'text', text: String(request.params.arguments?.text) }] };
    });
    // Stateless (no sessionIdGenerator): a fresh server and transport per request.
    const transport = new StreamableHTTPServerTransport({ enableJsonResponse: true });
    await server.connect(transport);
    await transport.handleRequest(req, res, message);
  });
  await new Promise<void>((resolve) => http.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(http.address() as AddressInfo).port}/mcp`, calls, http };
}

async function call(args: readonly string[]): Promise<{ code: number | NodeJS.Signals; output: string }> {
  const proc = forkNode(cli, ['call', ...args]);
  const code = await proc.exited;
  return { code, output: proc.output() };
}

describe('taskgate call as a requestor', () => {
  const redis = useRedis();

  it('[CAP-2][TOOL-2] does not task-augment a call to a server that declared no task support', async () => {
    const { url, calls, http } = await serverWithoutTasks();
    try {
      const { code, output } = await call(['--url', url, '--task', 'echo', '{"text":"plain"}']);
      expect(code).toBe(0);
      expect(output).toMatch(/does not support tasks for tools\/call/);
      expect(output).toContain('"text": "plain"');
      expect(calls).toEqual([{ name: 'echo', arguments: { text: 'plain' }, _meta: expect.anything() }]);
      expect(calls[0]).not.toHaveProperty('task');
    } finally {
      http.close();
    }
  });

  it('[CAP-2] task-augments the call when the server declared tasks.requests.tools.call', async () => {
    const gateway = createGateway({
      redis: redis.url,
      keyPrefix: redis.prefix,
      cursorSecret: 'cli-requestor-secret-0123',
    });
    const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools: exampleTools });
    try {
      await worker.ready;
      const { url } = await gateway.listen(0, '127.0.0.1');
      const { code, output } = await call(['--url', url, '--task', 'sleep', '{"ms":50}']);
      expect(code).toBe(0);
      expect(output).toMatch(/task [A-Za-z0-9_-]{28} created/);
      expect(output).toContain('slept 50 ms');
      expect(output).not.toMatch(/does not support tasks/);
    } finally {
      await worker.close({ deadlineMs: 500 });
      await gateway.close();
    }
  });
});
