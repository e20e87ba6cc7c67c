import { fileURLToPath } from 'node:url';
import { Keys } from '@taskgate/core';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import {
  type ForkedProcess,
  forkNode,
  type Haproxy,
  waitFor as pollUntil,
  type RedisServer,
  rawCall,
  rawInitialize,
  startHaproxy,
  startRedis,
  uniquePrefix,
} from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from './fixtures/processes.js';
import { RawSse } from './fixtures/raw-sse.js';

// Three gateway processes behind HAProxy (round robin, health checks on /readyz) and a worker. A session's
// GET stream and three tasks/result streams all run on gateway 0 (the others are in maintenance while they
// open); gateway 0 is then killed with SIGKILL mid-stream. Each client resumes through HAProxy with
// Last-Event-ID, lands on another gateway, and receives every event exactly once.

let redisServer: RedisServer;
let redis: Redis;
let keys: Keys;
let haproxy: Haproxy;
const procs: ForkedProcess[] = [];
const gateways: ForkedProcess[] = [];
const raws: RawSse[] = [];

beforeAll(async () => {
  redisServer = await startRedis();
  const prefix = uniquePrefix('gwkill');
  keys = new Keys(prefix);
  redis = new Redis(redisServer.url);
  const env = {
    REDIS_URL: redisServer.url,
    TASKGATE_KEY_PREFIX: prefix,
    TASKGATE_CURSOR_SECRET: 'gateway-kill-cursor-secret-0123456789',
    TASKGATE_POLL_INTERVAL_MS: '200',
    TASKGATE_SSE_HEARTBEAT_MS: '300',
    TASKGATE_SSE_RETRY_MS: '100',
  };
  // Three processes compiling from sources at once on a shared machine: a generous start-up time.
  const started = await Promise.all([forkGateway(env, 60_000), forkGateway(env, 60_000), forkGateway(env, 60_000)]);
  for (const { proc } of started) {
    procs.push(proc);
    gateways.push(proc);
  }
  const worker = forkNode(fileURLToPath(new URL('./fixtures/kill-worker.ts', import.meta.url)), [], env);
  procs.push(worker);
  await waitForOutput(worker, /worker ready/, 60_000);
  haproxy = await startHaproxy({
    backends: started.map(({ url }) => ({ port: Number(new URL(url).port) })),
    // One check a second (its timeout too): a loaded machine may take more than 100 ms to answer /readyz.
    healthCheck: { path: '/readyz', intervalMs: 1000 },
  });
  await haproxy.waitForStates(['UP', 'UP', 'UP']);
}, 120_000);

afterAll(async () => {
  await Promise.all(raws.splice(0).map((raw) => raw.kill()));
  await haproxy?.stop();
  await Promise.all(procs.map((proc) => proc.stop('SIGTERM', 5000)));
  await redis?.quit().catch(() => redis.disconnect());
  await redisServer?.stop();
}, 30_000);

const endpoint = (): string => `${haproxy.origin}/mcp`;

async function rawRequest(sessionId: string, method: string, params: unknown) {
  const response = await rawCall(endpoint(), sessionId, method, params);
  if (!String(response.headers['content-type']).startsWith('application/json')) {
    throw new Error(`${method}: HTTP ${response.status} ${response.text}\n${haproxy.output()}`);
  }
  return response.json() as { result?: Record<string, unknown>; error?: unknown };
}

async function openSse(sessionId: string, message?: unknown, lastEventId?: string): Promise<RawSse> {
  const raw = await RawSse.session(endpoint(), sessionId, message, lastEventId);
  raws.push(raw);
  return raw;
}

/** The harness's poll, with time for a loaded machine. */
const waitFor = (check: () => boolean | Promise<boolean>, what: string, timeoutMs = 15_000): Promise<void> =>
  pollUntil(check, what, timeoutMs);

type Message = Record<string, unknown> & { method?: string; params?: Record<string, unknown> };
const related = (taskId: string) => ({ [RELATED_TASK_META_KEY]: { taskId } });
const progressOf = (messages: Message[]) =>
  messages.filter((m) => m.method === 'notifications/progress').map((m) => m.params as Record<string, unknown>);
const statusesOf = (messages: Message[]) =>
  messages.filter((m) => m.method === 'notifications/tasks/status').map((m) => m.params as Record<string, unknown>);
const responseTo = (id: unknown) => (messages: Message[]) => messages.some((m) => m.id === id && !('method' in m));

describe('gateway kill -9 while carrying streams', () => {
  it('resumes the GET stream and every tasks/result stream on another pod: every event exactly once', async () => {
    await haproxy.setServerState(1, 'maint');
    await haproxy.setServerState(2, 'maint');
    await haproxy.waitForStates(['UP', 'MAINT', 'MAINT']);
    const sessionId = await rawInitialize(endpoint());
    const get = await openSse(sessionId);
    await waitFor(() => get.events.length > 0, 'the priming event');
    const run = async (ticks: number, ms: number, token?: string): Promise<string> => {
      const created = await rawRequest(sessionId, 'tools/call', {
        name: 'count',
        arguments: { ticks, ms },
        task: {},
        ...(token !== undefined && { _meta: { progressToken: token } }),
      });
      return (created.result as { task: { taskId: string } }).task.taskId;
    };
    const early = [await run(1, 0), await run(2, 0)];
    const TICKS = 40;
    const long = [await run(TICKS, 150, 'p-0'), await run(TICKS, 150, 'p-1'), await run(TICKS, 150, 'p-2')];
    const results = await Promise.all(
      long.map((taskId, index) =>
        openSse(sessionId, { jsonrpc: '2.0', id: 100 + index, method: 'tasks/result', params: { taskId } }),
      ),
    );
    await Promise.all(results.map((result) => result.until((m) => progressOf(m).length >= 5, 'five progress')));
    await get.until((messages) => statusesOf(messages).length >= 2, 'two status notifications');
    // Everything so far went to gateway 0.
    const before = await haproxy.servers();
    expect(before.map((server) => server.sessions > 0)).toEqual([true, false, false]);

    await haproxy.setServerState(1, 'ready');
    await haproxy.setServerState(2, 'ready');
    const killed = gateways[0] as ForkedProcess;
    process.kill(killed.pid, 'SIGKILL');
    expect(await killed.exited).toBe('SIGKILL');
    await haproxy.waitForStates(['DOWN', 'UP', 'UP']);
    await Promise.all([get, ...results].map((stream) => stream.ended));
    // Progress was cut mid-stream, and more status notifications happen while no GET stream is connected.
    for (const result of results) expect(progressOf(result.messages() as Message[]).length).toBeLessThan(TICKS);
    const late = [await run(1, 0), await run(3, 0)];
    const sessionsOfKilled = (await haproxy.servers())[0]?.sessions;

    const resumed = await Promise.all(results.map((result) => openSse(sessionId, undefined, result.lastEventId())));
    const resumedGet = await openSse(sessionId, undefined, get.lastEventId());
    await Promise.all(resumed.map((stream, index) => stream.until(responseTo(100 + index), 'the response')));

    // A task's outbox entries go out once across all of the session's streams: the GET stream carries them while
    // no tasks/result stream holds the task (on a loaded machine, the first tick may come before the tasks/result
    // stream opens). Together, every tick arrives exactly once.
    const getMessages = () => [...get.messages(), ...resumedGet.messages()] as Message[];
    const carried = (index: number) =>
      progressOf([...results[index]!.messages(), ...resumed[index]!.messages(), ...getMessages()] as Message[]).filter(
        (params) => params.progressToken === `p-${index}`,
      ).length;
    await waitFor(() => long.every((_id, index) => carried(index) >= TICKS), 'every tick on some stream');
    for (const [index, taskId] of long.entries()) {
      const own = [...results[index]!.messages(), ...resumed[index]!.messages()] as Message[];
      const ofTask = [...own, ...getMessages()].filter(
        (m) => JSON.stringify(m.params?._meta) === JSON.stringify(related(taskId)),
      );
      const ticks = progressOf(ofTask).sort((x, y) => Number(x.progress) - Number(y.progress));
      expect(ticks).toEqual(
        Array.from({ length: TICKS }, (_v, i) => ({
          progressToken: `p-${index}`,
          progress: i + 1,
          total: TICKS,
          message: `tick ${i + 1}`,
          _meta: related(taskId),
        })),
      );
      const logs = ofTask
        .filter((m) => m.method === 'notifications/message')
        .map((m) => (m.params?.data as { tick?: number } | undefined)?.tick)
        .sort((x, y) => Number(x) - Number(y));
      expect(logs).toEqual(Array.from({ length: TICKS }, (_v, i) => i + 1));
      // On each stream, a task's progress is in order.
      for (const stream of [results[index]!, resumed[index]!, get, resumedGet]) {
        const seen = progressOf(stream.messages() as Message[])
          .filter((params) => params.progressToken === `p-${index}`)
          .map((params) => Number(params.progress));
        expect(seen).toEqual([...seen].sort((x, y) => x - y));
      }
      expect(own.at(-1)).toEqual({
        jsonrpc: '2.0',
        id: 100 + index,
        result: { content: [{ type: 'text', text: `counted ${TICKS}` }], _meta: related(taskId) },
      });
      const ids = [...results[index]!.events, ...resumed[index]!.events].flatMap((event) => event.id ?? []);
      expect(new Set(ids).size).toBe(ids.length);
    }

    // The GET stream: every status notification of the session's feed once, in order, across the kill.
    const all = [...early, ...long, ...late];
    await waitFor(async () => {
      const done = await Promise.all(
        all.map(async (id) => (await redis.hget(keys.task(id), 'status')) === 'completed'),
      );
      return done.every(Boolean);
    }, 'every task to complete');
    const expected = (await redis.xrange(keys.sessionFeed(sessionId), '-', '+'))
      .filter(([, fields]) => fields[0] === 's')
      .map(([, fields]) => JSON.parse(fields[1] as string) as { taskId: string; status: string });
    const received = () => statusesOf(getMessages());
    await waitFor(() => received().length >= expected.length, 'every status notification');
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(received().map((params) => [params.taskId, params.status])).toEqual(
      expected.map((snapshot) => [snapshot.taskId, snapshot.status]),
    );
    expect(new Set(received().map((params) => params.taskId))).toEqual(new Set(all));
    // No resumption went to the killed gateway.
    expect((await haproxy.servers())[0]?.sessions).toBe(sessionsOfKilled);
  }, 60_000);
});
