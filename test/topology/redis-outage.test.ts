import { Keys } from '@taskgate/core';
import { type PersistentRedis, type RawResponse, raw, rawCall, rawInitialize, sleepMs } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { type Pods, startPods } from './outage-pods.js';

// Redis goes away for OUTAGE_MS while a gateway and a worker (real `taskgate` processes) carry tasks, some
// running and some waiting: killed (connections refused) and restarted from its AOF (`appendfsync always`), or
// frozen with SIGSTOP (connections open, nothing answers) and resumed. Meanwhile every MCP request answers
// within the command timeout with HTTP 503, `Retry-After` and a JSON-RPC -32603 body, and `/readyz` with 503;
// afterwards `/readyz` is 200 again, every acknowledged task ends and is found, and the worker takes new jobs
// without a restart.

const OUTAGE_MS = 10_000;
/** TASKGATE_REDIS_COMMAND_TIMEOUT_MS of the gateway. */
const COMMAND_TIMEOUT_MS = 2000;
/** The longest answer allowed while Redis is away: the timeout plus a busy machine's margin. */
const ANSWER_BOUND_MS = COMMAND_TIMEOUT_MS + 1500;
/** The task running when Redis goes away (its start recorded), and more sent after it. */
const RUNNING_MS = 3000;
const WAITING = 3;

type Answer = { readonly status: number; readonly ms: number; readonly response: RawResponse };

/** The response and how long it took; fails the test if none came within `boundMs` (a hang). */
async function timed(request: Promise<RawResponse>, what: string, boundMs = ANSWER_BOUND_MS): Promise<Answer> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const hang = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${boundMs} ms`)), boundMs);
  });
  try {
    const response = await Promise.race([request, hang]);
    return { status: response.status, ms: Date.now() - started, response };
  } finally {
    clearTimeout(timer);
  }
}

const rpc = (sessionId: string, pods: Pods) => ({
  call: (method: string, params: unknown) => rawCall(pods.url, sessionId, method, params),
});

function taskIdOf(response: RawResponse): string {
  const body = response.json() as { result?: { task?: { taskId?: string } } };
  const taskId = body.result?.task?.taskId;
  if (taskId === undefined) throw new Error(`not a CreateTaskResult: ${response.status} ${response.text}`);
  return taskId;
}

/** Waits until a worker recorded the start of the task's execution (written before its tool runs). */
async function untilStarted(pods: Pods, taskId: string): Promise<void> {
  const admin = new Redis(pods.redis.url, { maxRetriesPerRequest: 1 });
  try {
    const deadline = Date.now() + 10_000;
    while ((await admin.hget(new Keys(pods.prefix).task(taskId), 'startedAt')) === null) {
      if (Date.now() > deadline) throw new Error('the first task never started');
      await sleepMs(50);
    }
  } finally {
    admin.disconnect();
  }
}

async function statusOf(pods: Pods, sessionId: string, taskId: string): Promise<string> {
  const response = await rawCall(pods.url, sessionId, 'tasks/get', { taskId });
  const body = response.json() as {
    result?: { status?: string; statusMessage?: string };
    error?: { code: number; message: string };
  };
  // A task that failed says why (the assertion below prints it).
  if (body.result?.status === 'failed') return `failed: ${body.result.statusMessage ?? ''}`;
  if (body.result?.status !== undefined) return body.result.status;
  return `error ${response.status} ${body.error?.code} ${body.error?.message}`;
}

/** Every request kind of a client, with what it needs from before the outage. */
function requestsDuringOutage(pods: Pods, sessionId: string, waitingTask: string): [string, Promise<RawResponse>][] {
  const { call } = rpc(sessionId, pods);
  return [
    [
      'initialize',
      raw(pods.url, {
        headers: {
          'Content-Type': 'application/json',
          Accept: 'application/json, text/event-stream',
          'MCP-Protocol-Version': '2025-11-25',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 0,
          method: 'initialize',
          params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
        }),
      }),
    ],
    ['tools/call', call('tools/call', { name: 'sleep', arguments: { ms: 10 }, task: {} })],
    ['tasks/get', call('tasks/get', { taskId: waitingTask })],
    ['tasks/list', call('tasks/list', {})],
    ['tasks/result', call('tasks/result', { taskId: waitingTask })],
    ['tasks/cancel', call('tasks/cancel', { taskId: waitingTask })],
  ];
}

describe.each([
  { kind: 'down', stop: (redis: PersistentRedis) => redis.kill(), start: (redis: PersistentRedis) => redis.restart() },
  {
    kind: 'hung',
    stop: async (redis: PersistentRedis) => redis.pause(),
    start: async (redis: PersistentRedis) => redis.resume(),
  },
])('Redis $kind for 10 s with tasks in flight', ({ kind, stop, start }) => {
  let pods: Pods | undefined;
  afterEach(async () => {
    if (pods === undefined) return;
    await Promise.all([pods.gateway.stop('SIGKILL'), pods.worker.stop('SIGKILL')]);
    await pods.redis.stop();
    pods = undefined;
  });

  it('[LIF-1] requests answer 503 + Retry-After in time, /readyz turns 503 and back, no acknowledged task is lost', async () => {
    const p = await startPods(COMMAND_TIMEOUT_MS);
    pods = p;
    const sessionId = await rawInitialize(p.url);
    const { call } = rpc(sessionId, p);
    const acknowledged = [
      taskIdOf(await call('tools/call', { name: 'sleep', arguments: { ms: RUNNING_MS }, task: {} })),
    ];
    for (let i = 0; i < WAITING; i++) {
      acknowledged.push(taskIdOf(await call('tools/call', { name: 'sleep', arguments: { ms: 500 }, task: {} })));
    }
    const [running, waiting] = acknowledged as [string, string];
    await untilStarted(p, running);
    expect(await statusOf(p, sessionId, waiting)).toBe('working');

    await stop(p.redis);
    const back = Date.now() + OUTAGE_MS;
    const answers: { what: string; answer: Answer }[] = [];
    let rounds = 0;
    while (Date.now() + ANSWER_BOUND_MS < back) {
      rounds++;
      const round = requestsDuringOutage(p, sessionId, waiting).map(async ([what, request]) => ({
        what,
        answer: await timed(request, `${kind}: ${what}`),
      }));
      round.push(
        timed(raw(p.ready, { method: 'GET' }), `${kind}: /readyz`).then((answer) => ({ what: '/readyz', answer })),
      );
      answers.push(...(await Promise.all(round)));
      await sleepMs(500);
    }
    await start(p.redis);

    expect(rounds).toBeGreaterThanOrEqual(2);
    for (const { what, answer } of answers) {
      const label = `${kind}: ${what} answered ${answer.status} after ${answer.ms} ms: ${answer.response.text}`;
      expect(answer.status, label).toBe(503);
      if (what === '/readyz') {
        expect(answer.response.json(), label).toEqual({ status: 'unavailable' });
        continue;
      }
      expect(answer.response.headers['retry-after'], label).toMatch(/^[1-9][0-9]*$/);
      // The body was read before Redis was needed: the answer names the request's id.
      expect(answer.response.json(), label).toEqual({
        jsonrpc: '2.0',
        id: what === 'initialize' ? 0 : 1,
        error: { code: -32603, message: 'Service Unavailable: Redis does not answer; retry the request shortly' },
      });
    }

    // Back: ready again, every acknowledged task ends and is still known, and the worker takes new work.
    const readyBy = Date.now() + 15_000;
    while ((await timed(raw(p.ready, { method: 'GET' }), `${kind}: /readyz after`)).status !== 200) {
      if (Date.now() > readyBy) throw new Error('/readyz did not turn 200 again');
      await sleepMs(200);
    }
    const after = taskIdOf(await call('tools/call', { name: 'sleep', arguments: { ms: 10 }, task: {} }));
    const ends = new Map<string, string>();
    const endBy = Date.now() + 40_000;
    for (const taskId of [...acknowledged, after]) {
      for (;;) {
        const status = await statusOf(p, sessionId, taskId);
        if (['completed', 'cancelled'].includes(status) || /^(failed|error)/.test(status)) {
          ends.set(taskId, status);
          break;
        }
        if (Date.now() > endBy) throw new Error(`${taskId} is still ${status}`);
        await sleepMs(100);
      }
    }
    expect([...ends.values()]).toEqual(acknowledged.concat(after).map(() => 'completed'));
  }, 120_000);
});
