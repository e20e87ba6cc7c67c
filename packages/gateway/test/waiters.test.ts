import { Keys, type StoredTask, TaskOutbox, TaskStore } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { postHeaders, raw, rawInitialize, useRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { resolveGatewayOptions } from '../src/index.js';
import { CURSOR_SECRET, type Stack, useStacks } from './support/stack.js';

/** A tasks/result (or any POST) answered as a stream that we read as it comes. */
interface OpenStream {
  readonly status: number;
  /** Everything received so far. */
  text(): string;
  /** The ids of the SSE events received so far. */
  ids(): string[];
  /** The JSON-RPC messages received so far. */
  messages(): unknown[];
  /** Resolves once the server ended the response. */
  readonly ended: Promise<void>;
  /** Drops the connection from the client's side. */
  drop(): void;
}

async function post(url: string, sessionId: string, body: unknown): Promise<OpenStream> {
  const controller = new AbortController();
  const response = await fetch(url, {
    method: 'POST',
    headers: postHeaders(sessionId),
    body: JSON.stringify(body),
    signal: controller.signal,
  });
  let text = '';
  const reader = response.body?.getReader();
  const decoder = new TextDecoder();
  const ended = (async () => {
    for (;;) {
      const chunk = await reader?.read().catch(() => undefined);
      if (chunk === undefined || chunk.done) return;
      text += decoder.decode(chunk.value, { stream: true });
    }
  })();
  const lines = (prefix: string): string[] =>
    text.split('\n').flatMap((line) => (line.startsWith(prefix) ? [line.slice(prefix.length)] : []));
  return {
    status: response.status,
    text: () => text,
    ids: () => lines('id: '),
    messages: () => lines('data: ').flatMap((data) => (data === '' ? [] : [JSON.parse(data)])),
    ended,
    drop: () => controller.abort(),
  };
}

const tasksResult = (url: string, sessionId: string, taskId: string, id: number | string = 1): Promise<OpenStream> =>
  post(url, sessionId, { jsonrpc: '2.0', id, method: 'tasks/result', params: { taskId } });

/** Tasks of the session that never finish by themselves (no job): only the test finishes them. */
async function idleTasks(stack: Stack, sessionId: string, count: number): Promise<StoredTask[]> {
  const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
  return Promise.all(
    Array.from({ length: count }, () => store.create({ owner: sessionId, kind: 'task', tool: 'idle' })),
  );
}

/** Finishes a task behind the broker's back: a plain HSET, so nothing is published. */
async function finishSilently(stack: Stack, taskId: string, text: string): Promise<void> {
  const outcome = { result: { content: [{ type: 'text', text }] } };
  await stack.redis.hset(stack.keys.task(taskId), 'status', 'completed', 'outcome', JSON.stringify(outcome));
}

const answer = (taskId: string, text: string, id: number | string = 1) => ({
  jsonrpc: '2.0',
  id,
  result: { content: [{ type: 'text', text }], _meta: { [RELATED_TASK_META_KEY]: { taskId } } },
});

const subscribers = async (stack: Stack, channel: string): Promise<number> =>
  Number(((await stack.redis.pubsub('NUMSUB', channel)) as [string, number])[1]);

describe('blocked tasks/result requests', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('[RES-2] answers waiters whose status message was lost through the one safety re-read of the gateway', async () => {
    const stack = await start({ tools: false, gateway: { waiterSafetyMs: 100 } });
    const sessionId = await rawInitialize(stack.url);
    const [first, second, third] = (await idleTasks(stack, sessionId, 3)).map((task) => task.taskId) as [
      string,
      string,
      string,
    ];
    const streams = await Promise.all([
      tasksResult(stack.url, sessionId, first, 1),
      tasksResult(stack.url, sessionId, first, 2),
      tasksResult(stack.url, sessionId, second, 3),
      tasksResult(stack.url, sessionId, third, 4),
    ]);
    for (const stream of streams) expect(stream.status).toBe(200);
    // Two waiters on one task share one subscription.
    await waitFor(async () => (await subscribers(stack, stack.keys.taskChannel(first))) > 0, 'the subscription');
    expect(await subscribers(stack, stack.keys.taskChannel(first))).toBe(1);

    await finishSilently(stack, first, 'first');
    await finishSilently(stack, second, 'second');
    await Promise.all(streams.slice(0, 3).map((stream) => stream.ended));
    expect(streams.map((stream) => stream.messages())).toEqual([
      [answer(first, 'first', 1)],
      [answer(first, 'first', 2)],
      [answer(second, 'second', 3)],
      [],
    ]);
    // A task that expires while it is waited for (its hash gone, nothing published): the expiry error.
    await stack.redis.del(stack.keys.task(third));
    await streams[3]?.ended;
    expect(streams[3]?.messages()).toEqual([
      { jsonrpc: '2.0', id: 4, error: { code: -32602, message: 'Failed to retrieve task: Task has expired' } },
    ]);
    // Nothing waits any more: every task channel is unsubscribed.
    await waitFor(async () => (await subscribers(stack, stack.keys.taskChannel(first))) === 0, 'the unsubscribe');
    expect(await subscribers(stack, stack.keys.taskChannel(second))).toBe(0);
  });

  it('[RES-1] answers many waiters from the finish messages of their tasks: each its own outcome, no read per waiter', async () => {
    const stack = await start({ tools: false });
    const sessionId = await rawInitialize(stack.url);
    const tasks = (await idleTasks(stack, sessionId, 12)).map((task) => task.taskId);
    // Two waiters on the first task (one watch), one on each other task.
    const waiting = [tasks[0] as string, ...tasks];
    const streams = await Promise.all(waiting.map((taskId, i) => tasksResult(stack.url, sessionId, taskId, i)));
    for (const taskId of tasks) {
      await waitFor(async () => (await subscribers(stack, stack.keys.taskChannel(taskId))) > 0, 'the subscriptions');
    }
    const hmgets = async (): Promise<number> => {
      const stats = await stack.redis.info('commandstats');
      return Number(/cmdstat_hmget:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    };
    const before = await hmgets();
    // The last task's outcome is too long for its finish message to carry: its waiter reads it.
    const large = 'x'.repeat(9000);
    const failedAt = 5;
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const ownerId = Keys.ownerId(sessionId);
    await Promise.all(
      tasks.map((taskId, i) =>
        store.finish(
          { taskId, ownerId },
          i === failedAt
            ? { error: { code: -32000, message: 'tool broke' } }
            : { result: { content: [{ type: 'text', text: i === tasks.length - 1 ? large : `r${i}` }] } },
        ),
      ),
    );
    await Promise.all(streams.map((stream) => stream.ended));
    expect(streams.map((stream) => stream.messages())).toEqual(
      waiting.map((taskId, i) => {
        const index = tasks.indexOf(taskId);
        if (index === failedAt) return [{ jsonrpc: '2.0', id: i, error: { code: -32000, message: 'tool broke' } }];
        return [answer(taskId, index === tasks.length - 1 ? large : `r${index}`, i)];
      }),
    );
    // One HMGET per finish (its script loads the task) and one read by the waiter of the large outcome.
    expect((await hmgets()) - before).toBe(tasks.length + 1);
  });

  it('keeps many quiet streams alive from one heartbeat, storing nothing until one has something to carry', async () => {
    // The wait in the process runs out at once: every stream is quiet from its start.
    const stack = await start({ tools: false, gateway: { sseHeartbeatMs: 100, resultStreamAfterMs: 50 } });
    const sessionId = await rawInitialize(stack.url);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const talking = await store.create({ owner: sessionId, kind: 'task', tool: 'idle', progressToken: 'p' });
    const tasks = [talking, ...(await idleTasks(stack, sessionId, 2))];
    const streams = await Promise.all(tasks.map((task, i) => tasksResult(stack.url, sessionId, task.taskId, i)));
    await waitFor(() => streams.every((stream) => stream.ids().length > 0), 'the priming events');
    const streamIds = streams.map((stream) => (stream.ids()[0] as string).slice(0, 26));
    await waitFor(
      () => streams.every((stream) => stream.text().split(': keep-alive\n\n').length > 5),
      'five keep-alive comments on every stream',
    );
    // Quiet: no state, log, lease or carrier in Redis, and no record of this gateway holding them.
    expect(await stack.redis.keys(`${redis.prefix}*sse*`)).toEqual([]);
    for (const task of tasks) expect(await stack.redis.exists(stack.keys.taskCarrier(task.taskId))).toBe(0);

    // A progress message has to be stored: that stream becomes a logged one, under its priming id's stream id.
    await new TaskOutbox({ redis: stack.redis, keys: stack.keys }).append(talking.taskId, {
      type: 'progress',
      progress: 1,
    });
    await waitFor(() => (streams[0] as OpenStream).messages().length === 1, 'the progress notification');
    const loggedId = streamIds[0] as string;
    expect(await stack.redis.exists(stack.keys.sseConnection(loggedId))).toBe(1);
    expect(await stack.redis.get(stack.keys.taskCarrier(talking.taskId))).toBe(loggedId);
    expect((streams[0] as OpenStream).ids()[1]).toMatch(new RegExp(`^${loggedId}_\\d+-1$`));
    for (const streamId of streamIds.slice(1)) expect(await stack.redis.exists(stack.keys.sseState(streamId))).toBe(0);

    const ownerId = Keys.ownerId(sessionId);
    const outcome = { result: { content: [{ type: 'text', text: 'done' }] } };
    await Promise.all(tasks.map((task) => store.finish({ taskId: task.taskId, ownerId }, outcome)));
    await Promise.all(streams.map((stream) => stream.ended));
    expect(streams.map((stream) => stream.messages().slice(-1))).toEqual(
      tasks.map((task, i) => [answer(task.taskId, 'done', i)]),
    );
    // The logged stream gave its leases up when it ended.
    await waitFor(
      async () => (await stack.redis.exists(stack.keys.sseConnection(loggedId))) === 0,
      'the connection lease to go',
    );
    expect(await stack.redis.exists(stack.keys.taskCarrier(talking.taskId))).toBe(0);
  });

  it('[RES-5] primes a quiet stream with an id naming its task, and resumes it from that id alone', async () => {
    const stack = await start({ tools: false, gateway: { resultStreamAfterMs: 50 } });
    const other = await start({ tools: false });
    const sessionId = await rawInitialize(stack.url);
    const [task] = await idleTasks(stack, sessionId, 1);
    const taskId = (task as StoredTask).taskId;
    const first = await tasksResult(stack.url, sessionId, taskId, 'r');
    await waitFor(() => first.ids().length > 0, 'the priming event');
    const priming = first.ids()[0] as string;
    expect(priming).toMatch(/^[A-Za-z0-9_-]{26}_0-0\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
    expect(first.text()).toBe(`id: ${priming}\nretry: 1000\ndata: \n\n`);
    const streamId = priming.slice(0, 26);
    // Nothing in Redis: the id itself tells any pod what the stream answers.
    expect(await stack.redis.exists(stack.keys.sseState(streamId))).toBe(0);

    first.drop();
    await finishSilently(stack, taskId, 'resumed');
    const resume = (url: string, session: string, lastEventId: string) =>
      raw(url, {
        method: 'GET',
        headers: {
          Accept: 'text/event-stream',
          'Mcp-Session-Id': session,
          'MCP-Protocol-Version': '2025-11-25',
          'Last-Event-ID': lastEventId,
        },
      });
    // On the other pod: the response, from the task itself (nothing was logged), as often as asked.
    for (const url of [other.url, stack.url]) {
      const resumed = await resume(url, sessionId, priming);
      expect(resumed.status).toBe(200);
      expect(resumed.events()).toEqual([answer(taskId, 'resumed', 'r')]);
    }
    // An id altered, or another session's: refused, naming the header.
    const forged = `${priming.slice(0, -1)}${priming.endsWith('A') ? 'B' : 'A'}`;
    const refused = await resume(stack.url, sessionId, forged);
    expect(refused.status).toBe(400);
    expect(refused.text).toContain('Last-Event-ID is not an event id of this session');
    const stranger = await rawInitialize(stack.url);
    expect((await resume(stack.url, stranger, priming)).status).toBe(400);
  });

  it('[RES-5] resumes a quiet stream that became a logged one from its priming id: its log, then the rest', async () => {
    const stack = await start({ tools: false, gateway: { resultStreamAfterMs: 50 } });
    const sessionId = await rawInitialize(stack.url);
    const store = new TaskStore({ redis: stack.redis, keys: stack.keys, cursorSecret: CURSOR_SECRET });
    const task = await store.create({ owner: sessionId, kind: 'task', tool: 'idle', progressToken: 'p' });
    const first = await tasksResult(stack.url, sessionId, task.taskId, 'r');
    await waitFor(() => first.ids().length > 0, 'the priming event');
    const priming = first.ids()[0] as string;
    const outbox = new TaskOutbox({ redis: stack.redis, keys: stack.keys });
    await outbox.append(task.taskId, { type: 'progress', progress: 1 });
    await waitFor(() => first.messages().length === 1, 'the first progress notification');
    first.drop();
    await waitFor(
      async () => (await stack.redis.exists(stack.keys.sseConnection(priming.slice(0, 26)))) === 0,
      'the release',
    );
    await outbox.append(task.taskId, { type: 'progress', progress: 2 });
    const resumed = await fetch(stack.url, {
      method: 'GET',
      headers: {
        Accept: 'text/event-stream',
        'Mcp-Session-Id': sessionId,
        'MCP-Protocol-Version': '2025-11-25',
        'Last-Event-ID': priming,
      },
    });
    expect(resumed.status).toBe(200);
    const body = resumed.text();
    await waitFor(
      async () => (await stack.redis.exists(stack.keys.sseConnection(priming.slice(0, 26)))) === 1,
      'the resumption',
    );
    await store.finish(
      { taskId: task.taskId, ownerId: Keys.ownerId(sessionId) },
      {
        result: { content: [{ type: 'text', text: 'ok' }] },
      },
    );
    const messages = (await body)
      .split('\n')
      .filter((line) => line.startsWith('data: ') && line !== 'data: ')
      .map((line) => JSON.parse(line.slice(6)) as { method?: string; params?: { progress?: number } });
    expect(messages.map((message) => message.params?.progress ?? message)).toEqual([
      1,
      2,
      answer(task.taskId, 'ok', 'r'),
    ]);
  });

  it('answers 204 to a resumption from the priming event of a finished stream that logged nothing', async () => {
    const stack = await start();
    const sessionId = await rawInitialize(stack.url);
    const call = await post(stack.url, sessionId, {
      jsonrpc: '2.0',
      id: 'c',
      method: 'tools/call',
      params: { name: 'sleep', arguments: { ms: 20_000 } },
    });
    await waitFor(() => call.ids().length > 0 && stack.worker?.active === 1, 'the call to start');
    const priming = call.ids()[0] as string;
    // The client cancels its call: no response follows, and the stream ends.
    const cancelled = await raw(stack.url, {
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 'c' } }),
    });
    expect(cancelled.status).toBe(202);
    await call.ended;
    expect(call.messages()).toEqual([]);
    const streamId = priming.slice(0, 26);
    await waitFor(async () => (await stack.redis.hget(stack.keys.sseState(streamId), 'done')) === '1', 'done');
    const resumed = await raw(stack.url, {
      method: 'GET',
      headers: { Accept: 'text/event-stream', 'Mcp-Session-Id': sessionId, 'Last-Event-ID': priming },
    });
    expect(resumed.status).toBe(204);
  });

  it('takes the safety re-read interval as an option: 30 s unless told, a positive integer', () => {
    const base = { redis: 'redis://127.0.0.1', cursorSecret: CURSOR_SECRET };
    expect(resolveGatewayOptions(base).waiterSafetyMs).toBe(300_000);
    expect(resolveGatewayOptions({ ...base, waiterSafetyMs: 500 }).waiterSafetyMs).toBe(500);
    expect(() => resolveGatewayOptions({ ...base, waiterSafetyMs: 0 })).toThrow(
      'waiterSafetyMs must be a positive integer, got 0',
    );
  });
});
