import { expect } from 'vitest';
import { RawSse } from '../gateway/fixtures/raw-sse.js';
import { waitFor } from './support.js';

export type Json = Record<string, unknown>;

export const terminal = (t: Json): boolean => ['completed', 'failed', 'cancelled'].includes(t.status as string);

/** JSON-RPC over Streamable HTTP to the gateways behind `endpoint()`, as the bridge tests speak it. */
export function mcpClient(endpoint: () => string) {
  const headers = (sessionId?: string): Record<string, string> => ({
    'Content-Type': 'application/json',
    Accept: 'application/json, text/event-stream',
    'MCP-Protocol-Version': '2025-11-25',
    ...(sessionId !== undefined && { 'Mcp-Session-Id': sessionId }),
  });
  const streams: RawSse[] = [];

  async function session(): Promise<string> {
    const response = await fetch(endpoint(), {
      method: 'POST',
      headers: headers(),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 0,
        method: 'initialize',
        params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'bridge-test', version: '1' } },
      }),
    });
    await response.text();
    return response.headers.get('mcp-session-id') as string;
  }

  async function request(sessionId: string, method: string, params: unknown): Promise<{ result?: Json; error?: Json }> {
    const response = await fetch(endpoint(), {
      method: 'POST',
      headers: headers(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, params }),
    });
    return (await response.json()) as { result?: Json; error?: Json };
  }

  async function createTask(sessionId: string, name: string, args: Json, meta?: Json): Promise<string> {
    const answer = await request(sessionId, 'tools/call', {
      name,
      arguments: args,
      task: { ttl: 120_000 },
      ...(meta !== undefined && { _meta: meta }),
    });
    expect(answer.error).toBeUndefined();
    return (answer.result as { task: Json }).task.taskId as string;
  }

  async function task(sessionId: string, taskId: string): Promise<Json> {
    return (await request(sessionId, 'tasks/get', { taskId })).result as Json;
  }

  async function until(
    sessionId: string,
    taskId: string,
    check: (task: Json) => boolean,
    what: string,
    timeoutMs?: number,
  ) {
    let last: Json = {};
    await waitFor(
      async () => {
        last = await task(sessionId, taskId);
        return check(last);
      },
      what,
      timeoutMs,
    );
    return last;
  }

  /**
   * Opens a `tasks/result` stream (before the task ends: the result of a finished task comes as plain JSON,
   * without the progress notifications); `messages` resolves with every message up to the result (id 7).
   */
  async function openResult(sessionId: string, taskId: string) {
    const stream = await RawSse.open(endpoint(), {
      method: 'POST',
      headers: headers(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
    });
    streams.push(stream);
    return {
      messages: async (timeoutMs = 20_000): Promise<Json[]> => {
        await stream.until((messages) => messages.some((m) => m.id === 7), 'the result', timeoutMs);
        return stream.messages();
      },
    };
  }

  async function close(): Promise<void> {
    await Promise.all(streams.splice(0).map((stream) => stream.kill()));
  }

  return { session, request, createTask, task, until, openResult, close };
}

/** The progress notifications among `messages`, as [token, progress, total, message]. */
export function progressOf(messages: readonly Json[]): unknown[][] {
  return messages
    .filter((m) => m.method === 'notifications/progress')
    .map((m) => m.params as Json)
    .map((p) => [p.progressToken, p.progress, p.total, p.message]);
}

/**
 * One request of revision 2026-07-28 (no session) from a client of the tasks extension; its JSON-RPC result.
 * Answers that are JSON only (no progress token, no log level): what inline answers and `tasks/get` give.
 */
export async function request2026(url: string, method: string, params: Json, capabilities: Json = {}): Promise<Json> {
  const name = method === 'tools/call' ? params.name : params.taskId;
  const response = await fetch(url, {
    method: 'POST',
    headers: {
      'Content-Type': 'application/json',
      Accept: 'application/json, text/event-stream',
      'MCP-Protocol-Version': '2026-07-28',
      'Mcp-Method': method,
      'Mcp-Name': String(name),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientCapabilities': {
            ...capabilities,
            extensions: { 'io.modelcontextprotocol/tasks': {} },
          },
        },
      },
    }),
  });
  const body = (await response.json()) as { result?: Json; error?: Json };
  if (body.result === undefined) throw new Error(`${method}: ${JSON.stringify(body.error)}`);
  return body.result;
}
