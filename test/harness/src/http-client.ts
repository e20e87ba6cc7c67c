import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach } from 'vitest';

/** An SDK client connected to `url` (closed after the test). */
export async function connectClient(
  url: string,
  options: { token?: string; capabilities?: Record<string, unknown> } = {},
): Promise<{ client: Client; transport: StreamableHTTPClientTransport }> {
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(options.token !== undefined && { requestInit: { headers: { Authorization: `Bearer ${options.token}` } } }),
  });
  const client = new Client({ name: 'gateway-test', version: '1.0.0' }, { capabilities: options.capabilities ?? {} });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}
const clients: Client[] = [];
try {
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
  });
} catch {
  // Imported outside a test file (a script such as test/conformance/run.ts): there is no suite to hook, and
  // such a caller closes its own clients.
}

/** Every page of the client's `tasks/list`, following `nextCursor` to the end: each page's task ids, in order. */
export async function taskPages(client: Client): Promise<string[][]> {
  const pages: string[][] = [];
  let cursor: string | undefined;
  do {
    const page = await client.experimental.tasks.listTasks(cursor);
    pages.push(page.tasks.map((task) => task.taskId));
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return pages;
}

/** What a raw HTTP exchange returned. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
  json(): unknown;
  /** The JSON-RPC messages of an SSE body. */
  events(): unknown[];
}

/**
 * The event ids and the JSON-RPC messages of an SSE body (or of as much of it as has arrived), in order.
 * Priming events (an id with empty data) carry no message.
 */
export function parseSse(text: string): { ids: string[]; messages: unknown[] } {
  const lines = text.split('\n');
  return {
    ids: lines.flatMap((line) => (line.startsWith('id: ') ? [line.slice(4)] : [])),
    messages: lines
      .filter((line) => line.startsWith('data: ') && line.length > 6)
      .map((line) => JSON.parse(line.slice(6))),
  };
}

/** One HTTP request with any headers (Host included), the whole body read. */
export function raw(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(url, { method: init.method ?? 'POST', headers: init.headers ?? {} }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        text += chunk;
      });
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          text,
          json: () => JSON.parse(text),
          events: () => parseSse(text).messages,
        }),
      );
      res.on('error', reject);
    });
    req.on('error', reject);
    if (init.body !== undefined) req.write(init.body);
    req.end();
  });
}

/** Headers of a well-formed POST after initialize. */
export function postHeaders(sessionId?: string, extra: Record<string, string> = {}): Record<string, string> {
  return {
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
    ...(sessionId !== undefined && { 'Mcp-Session-Id': sessionId }),
    ...extra,
  };
}

/** Initializes a session over raw HTTP; returns its id. */
export async function rawInitialize(url: string, extra: Record<string, string> = {}): Promise<string> {
  const response = await raw(url, {
    headers: postHeaders(undefined, extra),
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
    }),
  });
  const sessionId = response.headers['mcp-session-id'];
  if (response.status !== 200 || typeof sessionId !== 'string') {
    throw new Error(`initialize failed: ${response.status} ${response.text}`);
  }
  return sessionId;
}

/** Sends one JSON-RPC request over raw HTTP. */
export function rawCall(
  url: string,
  sessionId: string,
  method: string,
  params?: unknown,
  extra: Record<string, string> = {},
): Promise<RawResponse> {
  const body = { jsonrpc: '2.0', id: 1, method, ...(params !== undefined && { params }) };
  return raw(url, { headers: postHeaders(sessionId, extra), body: JSON.stringify(body) });
}

export const sleepMs = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Polls `check` until it holds; throws after `timeoutMs`. The default is long: a wait costs only what the
 * condition takes, and a loaded machine (CI beside other jobs) may take seconds for what takes milliseconds alone.
 */
export async function waitFor(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 15_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleepMs(20);
  }
}
