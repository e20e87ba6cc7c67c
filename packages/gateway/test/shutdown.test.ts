import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { connectClient, postHeaders, raw, rawCall, sleepMs, useStacks, waitFor } from './support/stack.js';

describe('gateway lifecycle', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('close() ends tasks/result and GET streams at once; the task runs on and another gateway answers the session', async () => {
    const a = await start();
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
    // The stream ends without a response: the client retries elsewhere.
    expect(await waiting.text()).toBe('');
    await closing;
    expect(await a.redis.exists(a.keys.sessionStream(sessionId))).toBe(0);
    const result = await rawCall(b.url, sessionId, 'tasks/result', { taskId });
    expect(result.events()).toEqual([
      {
        jsonrpc: '2.0',
        id: 1,
        result: { content: [{ type: 'text', text: 'slept 600 ms' }], _meta: { [RELATED_TASK_META_KEY]: { taskId } } },
      },
    ]);
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

  it('an open GET stream keeps its session alive past the idle expiry', async () => {
    const stack = await start({ tools: false, gateway: { sessionIdleTtlMs: 500, sseHeartbeatMs: 100 } });
    const { transport } = await connectClient(stack.url);
    const sessionId = transport.sessionId as string;
    await sleepMs(900);
    expect((await rawCall(stack.url, sessionId, 'ping')).status).toBe(200);
  });
});
