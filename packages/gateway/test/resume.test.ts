import { postHeaders, raw, rawCall, rawInitialize, sleepMs, useRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

/** The `id:` lines of an SSE body, in order. */
const eventIds = (text: string): string[] =>
  text.split('\n').flatMap((line) => (line.startsWith('id: ') ? [line.slice(4)] : []));

const getHeaders = (sessionId: string, lastEventId?: string): Record<string, string> => ({
  Accept: 'text/event-stream',
  'Mcp-Session-Id': sessionId,
  'MCP-Protocol-Version': '2025-11-25',
  ...(lastEventId !== undefined && { 'Last-Event-ID': lastEventId }),
});

describe('resumable SSE streams', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('replays the rest of a finished stream once, then answers 204: nothing left', async () => {
    const stack = await start();
    const sessionId = await rawInitialize(stack.url);
    const call = await rawCall(stack.url, sessionId, 'tools/call', {
      name: 'chatty',
      arguments: { steps: 2 },
      _meta: { progressToken: 'tok' },
    });
    const ids = eventIds(call.text);
    // Priming event, 2 × (progress, log), the response.
    expect(ids).toHaveLength(6);
    const replay = await raw(stack.url, { method: 'GET', headers: getHeaders(sessionId, ids[3]) });
    expect(replay.status).toBe(200);
    expect(eventIds(replay.text)).toEqual(ids.slice(4));
    expect(replay.events()).toEqual(call.events().slice(3));
    const done = await raw(stack.url, { method: 'GET', headers: getHeaders(sessionId, ids[5]) });
    expect(done.status).toBe(204);
  });

  it('refuses a malformed Last-Event-ID with 400, and opens a fresh GET stream for another session’s event id', async () => {
    const stack = await start({ tools: false });
    const mine = await rawInitialize(stack.url);
    const other = await rawInitialize(stack.url);
    const bad = await raw(stack.url, { method: 'GET', headers: getHeaders(mine, 'not-an-event-id') });
    expect(bad.status).toBe(400);
    expect((bad.json() as { error: { message: string } }).error.message).toMatch(/^Bad Request: Last-Event-ID/);

    const controller = new AbortController();
    const theirs = await fetch(stack.url, { headers: getHeaders(other), signal: controller.signal });
    const reader = theirs.body?.getReader();
    const first = new TextDecoder().decode((await reader?.read())?.value);
    const theirId = eventIds(first)[0] as string;
    controller.abort();
    // Their stream's id from my session: not theirs to resume, so my own session stream opens afresh.
    const fresh = new AbortController();
    const mineStream = await fetch(stack.url, { headers: getHeaders(mine, theirId), signal: fresh.signal });
    expect(mineStream.status).toBe(200);
    const text = new TextDecoder().decode((await mineStream.body?.getReader().read())?.value);
    const [ownId] = eventIds(text);
    expect(ownId?.slice(0, 26)).not.toBe(theirId.slice(0, 26));
    fresh.abort();
  });

  it('refuses malformed Last-Event-IDs of either form with 400, and a feed position for a stream without one', async () => {
    const stack = await start();
    const sessionId = await rawInitialize(stack.url);
    const call = await rawCall(stack.url, sessionId, 'tools/call', { name: 'chatty', arguments: { steps: 1 } });
    const [priming = ''] = eventIds(call.text);
    const streamId = priming.slice(0, 26);
    const controller = new AbortController();
    const get = await fetch(stack.url, { headers: getHeaders(sessionId), signal: controller.signal });
    const getId = eventIds(new TextDecoder().decode((await get.body?.getReader().read())?.value))[0] as string;
    controller.abort();
    for (const bad of [
      `${getId}_`,
      `${getId}_7`,
      `${getId}_x-1`,
      `${getId}_1-1_2-2`,
      `${getId} 1-1`,
      `${getId.slice(0, 26)}__1-1`,
      `${getId.slice(1)}_1-1`,
      `${getId}_${'9'.repeat(21)}-1`,
    ]) {
      const response = await raw(stack.url, { method: 'GET', headers: getHeaders(sessionId, bad) });
      expect(response.status, bad).toBe(400);
      expect((response.json() as { error: { message: string } }).error.message).toMatch(/^Bad Request: Last-Event-ID/);
    }
    // Well-formed, but only a session's GET stream has ids with a feed position: not one of a direct call's.
    const feedForm = await raw(stack.url, { method: 'GET', headers: getHeaders(sessionId, `${priming}_1-1`) });
    expect(feedForm.status).toBe(400);
    expect((feedForm.json() as { error: { message: string } }).error.message).toBe(
      'Bad Request: Last-Event-ID is not an event id of this stream',
    );
    expect(streamId).not.toBe(getId.slice(0, 26));
  });

  it('keeps an idle stream alive with comment heartbeats, and refreshes its connection lease', async () => {
    const stack = await start({ tools: false, gateway: { sseHeartbeatMs: 100 } });
    const sessionId = await rawInitialize(stack.url);
    const controller = new AbortController();
    const response = await fetch(stack.url, { headers: getHeaders(sessionId), signal: controller.signal });
    const reader = response.body?.getReader();
    let text = '';
    while (!text.includes(': keep-alive\n\n')) text += new TextDecoder().decode((await reader?.read())?.value);
    const streamId = eventIds(text)[0]?.slice(0, 26) as string;
    await sleepMs(400);
    // The lease (3 heartbeats = 300 ms) outlived 400 ms: the heartbeats refreshed it.
    expect(await stack.redis.exists(stack.keys.sseConnection(streamId))).toBe(1);
    controller.abort();
    // The connection lease and the session's GET-stream lease are released one after the other.
    const held = () => stack.redis.exists(stack.keys.sseConnection(streamId), stack.keys.sessionStream(sessionId));
    await waitFor(async () => (await held()) === 0, 'the release');
    expect(await held()).toBe(0);
  });

  it('answers a client that resumes a direct call after the grace period with the cancellation', async () => {
    const stack = await start({ gateway: { directCallCancelGraceMs: 100 } });
    const sessionId = await rawInitialize(stack.url);
    const controller = new AbortController();
    const response = await fetch(stack.url, {
      method: 'POST',
      headers: postHeaders(sessionId),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 'c',
        method: 'tools/call',
        params: { name: 'sleep', arguments: { ms: 20_000 } },
      }),
      signal: controller.signal,
    });
    const text = new TextDecoder().decode((await response.body?.getReader().read())?.value);
    const [priming] = eventIds(text);
    await waitFor(() => stack.worker?.active === 1, 'the call to start');
    controller.abort();
    await waitFor(() => stack.worker?.active === 0, 'the call to be cancelled', 10_000);
    const late = await raw(stack.url, { method: 'GET', headers: getHeaders(sessionId, priming) });
    expect(late.events()).toEqual([
      {
        jsonrpc: '2.0',
        id: 'c',
        error: {
          code: -32603,
          message:
            'The call was cancelled: The client closed the stream of this call and did not resume it within 100 ms',
        },
      },
    ]);
  });
});
