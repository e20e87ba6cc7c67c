import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import {
  connectClient,
  postHeaders,
  raw,
  rawCall,
  rawInitialize,
  scrape,
  sleepMs,
  useRedis,
  waitFor,
} from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

describe('gateway lifecycle', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('close() ends tasks/result and GET streams at once; the task runs on and another gateway answers the session', async () => {
    // The tasks/result opens its (quiet) stream at once (see result-wait.test.ts for one that waits in the process).
    const a = await start({ gateway: { resultStreamAfterMs: 0 } });
    // The other gateway answers the task's end as JSON (it ends well within this wait in the process).
    const b = await start({ tools: false });
    const { client, transport } = await connectClient(a.url);
    const sessionId = transport.sessionId as string;
    const created = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 600 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = created.task;
    // The SDK client holds the session's GET stream on this gateway once the lease exists.
    await waitFor(async () => (await a.redis.exists(a.keys.sessionStream(sessionId))) === 1, 'the GET stream');
    const headers = postHeaders(sessionId);
    const waiting = await fetch(a.url, {
      method: 'POST',
      headers,
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tasks/result', params: { taskId } }),
    });
    expect(waiting.headers.get('content-type')).toBe('text/event-stream');
    const closing = a.gateway.close();
    // The stream ends without a response, with an SSE retry hint: the client resumes it elsewhere (after the
    // priming event, whose quiet id names the task and the request).
    expect(await waiting.text()).toMatch(
      /^id: [A-Za-z0-9_-]{26}_0-0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}\nretry: 1000\ndata: \n\nretry: 1000\n\n$/,
    );
    await closing;
    expect(await a.redis.exists(a.keys.sessionStream(sessionId))).toBe(0);
    // JSON when the task ended by then (within the other gateway's wait in the process); otherwise a stream.
    const result = await rawCall(b.url, sessionId, 'tasks/result', { taskId });
    expect(result.events().length > 0 ? result.events().at(-1) : result.json()).toEqual({
      jsonrpc: '2.0',
      id: 1,
      result: { content: [{ type: 'text', text: 'slept 600 ms' }], _meta: { [RELATED_TASK_META_KEY]: { taskId } } },
    });
    // The GET stream's lease was given up with it, so the other gateway can hold the stream now.
    const controller = new AbortController();
    const reopened = await fetch(b.url, {
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId },
      signal: controller.signal,
    });
    expect(reopened.status).toBe(200);
    controller.abort();
  });

  it('close() lets a running direct call finish within drainTimeoutMs', async () => {
    const stack = await start({ gateway: { drainTimeoutMs: 3000 } });
    const { client } = await connectClient(stack.url);
    const call = client.callTool({ name: 'sleep', arguments: { ms: 400 } }, CallToolResultSchema);
    await waitFor(() => stack.worker?.active === 1, 'the call to start');
    const closed = stack.gateway.close();
    expect(await call).toEqual({ content: [{ type: 'text', text: 'slept 400 ms' }] });
    await closed;
    await expect(raw(stack.url, { headers: postHeaders(), body: '{}' })).rejects.toThrow();
  });

  it('drains: readiness off, new requests 503 with Retry-After, GET streams end with a retry hint, then closes', async () => {
    const stack = await start({ gateway: { drainTimeoutMs: 5000, drainRetryAfterMs: 2500 } });
    const origin = new URL(stack.url).origin;
    const sessionId = await rawInitialize(stack.url);
    const getStream = await fetch(stack.url, {
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'MCP-Protocol-Version': '2025-11-25' },
    });
    expect(getStream.status).toBe(200);
    const { client } = await connectClient(stack.url);
    // A plain call keeps the gateway draining (listening, refusing new work) until it finishes.
    const call = client.callTool({ name: 'sleep', arguments: { ms: 800 } }, CallToolResultSchema);
    await waitFor(() => stack.worker?.active === 1, 'the call to start');
    const closed = stack.gateway.close();

    expect(await getStream.text()).toMatch(/retry: 2500\n\n$/);
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toEqual({ status: 'draining' });
    expect((await fetch(`${origin}/healthz`)).status).toBe(200);
    const refused = await rawCall(stack.url, sessionId, 'ping');
    expect(refused.status).toBe(503);
    expect(refused.headers['retry-after']).toBe('3');
    // Refused before its body is read: no request id to answer with.
    expect(refused.json()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32603,
        message:
          'Service Unavailable: this gateway is shutting down; retry the request, another gateway will answer it',
      },
    });
    expect((await scrape(`${origin}/metrics`)).value('taskgate_gateway_draining')).toBe(1);

    expect(await call).toEqual({ content: [{ type: 'text', text: 'slept 800 ms' }] });
    await closed;
    await expect(fetch(`${origin}/healthz`)).rejects.toThrow();
  });

  it('an open GET stream keeps its session alive past the idle expiry', async () => {
    const stack = await start({ tools: false, gateway: { sessionIdleTtlMs: 500, sseHeartbeatMs: 100 } });
    const { transport } = await connectClient(stack.url);
    const sessionId = transport.sessionId as string;
    await sleepMs(900);
    expect((await rawCall(stack.url, sessionId, 'ping')).status).toBe(200);
  });
});
