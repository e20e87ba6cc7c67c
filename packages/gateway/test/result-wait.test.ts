import { Keys, TaskOutbox, TaskStore } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { postHeaders, rawCall, rawInitialize, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { CURSOR_SECRET, type Stack, useStacks } from './support/stack.js';

/** A tasks/result as it arrives: its headers' time and content type, then its whole body. */
async function tasksResult(stack: Stack, sessionId: string, taskId: string) {
  const sent = performance.now();
  const response = await fetch(stack.url, {
    method: 'POST',
    headers: postHeaders(sessionId),
    body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
  });
  return {
    afterMs: performance.now() - sent,
    contentType: response.headers.get('content-type') ?? '',
    body: response.text(),
  };
}

const answer = (taskId: string, text: string) => ({
  jsonrpc: '2.0',
  id: 7,
  result: { content: [{ type: 'text', text }], _meta: { [RELATED_TASK_META_KEY]: { taskId } } },
});

/** A quiet stream's priming id: its stream id, then what it waits for and a MAC (see `QuietIds`). */
const QUIET_ID = /^[A-Za-z0-9_-]{26}_0-0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/;

/** The id of a stream's first event (its priming event). */
async function primingOf(response: { body: Promise<string> }): Promise<string> {
  return /^id: (\S+)\n/.exec(await response.body)?.[1] ?? '';
}

/** Every key of the test's prefix that a stream writes: its state, log and leases, the carrier, the held set. */
async function streamKeys(stack: Stack, prefix: string): Promise<string[]> {
  const keys = await stack.redis.keys(`${prefix}*`);
  return keys.filter((key) => /:(sse|carrier):|streams:/.test(key)).sort();
}

describe('tasks/result of a running task', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[RES-2] answers as JSON when the task ends within resultStreamAfterMs, and writes no stream state', async () => {
    const stack = await start({ gateway: { resultStreamAfterMs: 5000 } });
    const sessionId = await rawInitialize(stack.url);
    const created = await rawCall(stack.url, sessionId, 'tools/call', {
      name: 'sleep',
      arguments: { ms: 300 },
      task: {},
    });
    const { taskId } = (created.json() as { result: { task: { taskId: string } } }).result.task;
    const waited = await tasksResult(stack, sessionId, taskId);
    expect(waited.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(await waited.body)).toEqual(answer(taskId, 'slept 300 ms'));
    expect(await streamKeys(stack, redis.prefix)).toEqual([]);
  });

  it('[INP-5] waits in the process in a session whose GET stream is open; a task message goes out once, on one of the two', async () => {
    const stack = await start({ tools: false, gateway: { resultStreamAfterMs: 5000 } });
    const sessionId = await rawInitialize(stack.url);
    const aborter = new AbortController();
    const get = await fetch(stack.url, {
      method: 'GET',
      headers: { ...postHeaders(sessionId), Accept: 'text/event-stream' },
      signal: aborter.signal,
    });
    expect(get.status).toBe(200);
    const keys = new Keys(redis.prefix);
    await expect.poll(async () => await stack.redis.exists(keys.sessionFeed(sessionId))).toBe(1);
    let onGet = '';
    const reading = (async () => {
      const decoder = new TextDecoder();
      try {
        for await (const chunk of get.body as unknown as AsyncIterable<Uint8Array>) onGet += decoder.decode(chunk);
      } catch {
        // Aborted at the end of the test.
      }
    })();
    const getStreamKeys = await streamKeys(stack, redis.prefix);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const ownerId = Keys.ownerId(sessionId);

    // Ends within the wait: answered as JSON, and no stream state written beside the GET stream's.
    const quick = await store.create({ owner: sessionId, kind: 'task', tool: 'idle' });
    const waited = tasksResult(stack, sessionId, quick.taskId);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await store.finish({ taskId: quick.taskId, ownerId }, { result: { content: [{ type: 'text', text: 'quick' }] } });
    const answered = await waited;
    expect(answered.contentType).toMatch(/^application\/json/);
    expect(JSON.parse(await answered.body)).toEqual(answer(quick.taskId, 'quick'));
    expect(await streamKeys(stack, redis.prefix)).toEqual(getStreamKeys);

    // A progress message: relayed exactly once, on the tasks/result stream or on the GET stream.
    const talking = await store.create({ owner: sessionId, kind: 'task', tool: 'idle', progressToken: 'p' });
    const pending = tasksResult(stack, sessionId, talking.taskId);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await new TaskOutbox({ redis: stack.redis, keys: stack.keys }).append(talking.taskId, {
      type: 'progress',
      progress: 1,
    });
    const streamed = await pending;
    expect(streamed.contentType).toBe('text/event-stream');
    await store.finish({ taskId: talking.taskId, ownerId }, { result: { content: [{ type: 'text', text: 'ok' }] } });
    const body = await streamed.body;
    expect(body).toContain(JSON.stringify(answer(talking.taskId, 'ok')));
    const progress = (text: string) => text.split('"method":"notifications/progress"').length - 1;
    await expect.poll(() => progress(body) + progress(onGet)).toBe(1);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(progress(body) + progress(onGet)).toBe(1);
    aborter.abort();
    await reading;
  });

  it('opens a quiet stream once the wait runs out, and a logged one at once for an outbox entry', async () => {
    const stack = await start({ tools: false, gateway: { resultStreamAfterMs: 400 } });
    const sessionId = await rawInitialize(stack.url);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const ownerId = Keys.ownerId(sessionId);
    const slow = await store.create({ owner: sessionId, kind: 'task', tool: 'idle' });
    const waited = await tasksResult(stack, sessionId, slow.taskId);
    expect(waited.contentType).toBe('text/event-stream');
    expect(waited.afterMs).toBeGreaterThanOrEqual(390);
    // Quiet: primed with an id that names the task, and nothing stored for it in Redis.
    expect(await streamKeys(stack, redis.prefix)).toEqual([]);
    await store.finish({ taskId: slow.taskId, ownerId }, { result: { content: [{ type: 'text', text: 'late' }] } });
    expect(await waited.body).toBe(
      `id: ${await primingOf(waited)}\nretry: 1000\ndata: \n\nevent: message\ndata: ${JSON.stringify(answer(slow.taskId, 'late'))}\n\n`,
    );
    expect(await primingOf(waited)).toMatch(QUIET_ID);
    expect(await streamKeys(stack, redis.prefix)).toEqual([]);

    // A progress message cannot wait: the stream opens when it is appended, long before the wait runs out.
    const wait = await start({ tools: false, gateway: { resultStreamAfterMs: 60_000 } });
    const talking = await store.create({ owner: sessionId, kind: 'task', tool: 'idle', progressToken: 'p' });
    const pending = tasksResult(wait, sessionId, talking.taskId);
    await new Promise((resolve) => setTimeout(resolve, 200));
    await new TaskOutbox({ redis: stack.redis, keys: stack.keys }).append(talking.taskId, {
      type: 'progress',
      progress: 1,
    });
    const streamed = await pending;
    expect(streamed.contentType).toBe('text/event-stream');
    expect(streamed.afterMs).toBeLessThan(30_000);
    await store.finish({ taskId: talking.taskId, ownerId }, { result: { content: [{ type: 'text', text: 'ok' }] } });
    const body = await streamed.body;
    expect(body).toContain('"method":"notifications/progress"');
    expect(body).toContain(JSON.stringify(answer(talking.taskId, 'ok')));
  });

  it('close() turns a tasks/result still waiting into a stream that ends after its priming event', async () => {
    const stack = await start({ tools: false, gateway: { resultStreamAfterMs: 60_000 } });
    const sessionId = await rawInitialize(stack.url);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const task = await store.create({ owner: sessionId, kind: 'task', tool: 'idle' });
    const pending = tasksResult(stack, sessionId, task.taskId);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const closing = stack.gateway.close();
    const streamed = await pending;
    expect(streamed.contentType).toBe('text/event-stream');
    // The client resumes it elsewhere, from the priming event's id.
    expect(await streamed.body).toMatch(
      new RegExp(`^id: ${QUIET_ID.source.slice(1, -1)}\nretry: 1000\ndata: \n\nretry: 1000\n\n$`),
    );
    await closing;
  });
});
