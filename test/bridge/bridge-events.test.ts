import { type ForkedProcess, freePort, type RedisServer, scrape, startRedis } from '@taskgate/test-harness';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, terminal } from './mcp-client.js';
import { bridgeConfig, forkBridge, forkLegacyWorker, removeConfigs, waitFor, writeConfig } from './support.js';

// The bridge follows each existing queue's event stream from a position stored in taskgate's Redis: what
// happened while no bridge followed is applied after a restart, by one replica at a time. Two gateways and
// bridges on taskgate's Redis; plain BullMQ workers (importing only bullmq) on the legacy Redis.

let pods: Pods;
let legacy: RedisServer;
let configPath: string;
let bridge: ForkedProcess | undefined;
let second: ForkedProcess | undefined;
let bridgePort: number;
let reportsWorker: ForkedProcess;
const extra: ForkedProcess[] = [];
let reports: Queue;
let greetings: Queue;
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

// A bridge stopping waits this long for its tasks' jobs, then hands the tasks to another bridge.
const DRAIN = { TASKGATE_DRAIN_TIMEOUT_MS: '1000' };
const startBridge = async (port: number): Promise<ForkedProcess> =>
  await forkBridge({ ...pods.env, ...DRAIN, TASKGATE_METRICS_PORT: String(port) }, configPath);
const ran = (worker: ForkedProcess, taskId: string): number =>
  worker.output().match(new RegExp(`ran ${taskId} `, 'g'))?.length ?? 0;
const resultOf = (messages: Json[]): Json => messages.find((m) => m.id === 7)?.result as Json;
const pages = (n: number): unknown[][] => Array.from({ length: n }, (_, i) => [i + 1, n, `page ${i + 1} of ${n}`]);

beforeAll(async () => {
  legacy = await startRedis();
  configPath = writeConfig(bridgeConfig(legacy.url));
  reportsWorker = await forkLegacyWorker(legacy.url, 'reports');
  bridgePort = await freePort();
  pods = await startPods(
    'bridge-events',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      bridge = await forkBridge({ ...env, ...DRAIN, TASKGATE_METRICS_PORT: String(bridgePort) }, configPath);
      return bridge;
    },
  );
  const connection = { host: '127.0.0.1', port: legacy.port };
  reports = new Queue('reports', { connection, prefix: 'legacy' });
  greetings = new Queue('greetings', { connection, prefix: 'legacy' });
}, 90_000);

afterAll(async () => {
  await client.close();
  await Promise.allSettled([reports?.close(), greetings?.close()]);
  await Promise.all([...extra, reportsWorker].map((proc) => proc?.stop('SIGTERM', 5000)));
  await Promise.all([bridge, second].map((proc) => proc?.stop('SIGTERM', 5000)));
  await pods?.stop();
  await legacy?.stop();
  removeConfigs();
}, 60_000);

describe('bridge: the event stream of each existing queue, from a stored position', () => {
  it('delivers the progress and the result of a job that ran while the bridge was killed with -9', async () => {
    // A position is stored from the bridge's first round, before the queue's stream has any entry, so a bridge
    // killed before it applied anything resumes from there.
    const positionKey = pods.keys.bridgePosition('legacy', 'legacy:reports');
    await expect.poll(() => pods.redis.hget(positionKey, 'position')).toBe('0-0');
    const sid = await client.session();
    const taskId = await client.createTask(
      sid,
      'render_report',
      { n: 8, steps: 3, stepMs: 400 },
      { progressToken: 'down-1' },
    );
    await waitFor(async () => (await reports.getJobState(taskId)) === 'active', 'the job to start');
    await bridge?.stop('SIGKILL');
    await waitFor(async () => (await reports.getJobState(taskId)) === 'completed', 'the job to complete', 20_000);
    expect((await client.task(sid, taskId)).status).toBe('working');

    const result = await client.openResult(sid, taskId);
    bridge = await startBridge(bridgePort);
    const messages = await result.messages();
    // Every progress the job reported while no bridge ran reaches the original token, once, in order.
    expect(progressOf(messages)).toEqual(pages(3).map((p) => ['down-1', ...p]));
    expect(resultOf(messages).structuredContent).toEqual({ pages: 16 });
    expect((await client.task(sid, taskId)).status).toBe('completed');
    expect(ran(reportsWorker, taskId)).toBe(1);
    // The follower caught up with the stream: no lag left.
    await waitFor(async () => {
      const scraped = await scrape(`http://127.0.0.1:${bridgePort}/metrics`);
      return scraped.value('taskgate_bridge_event_lag_seconds', { queue: 'legacy:reports' }) < 1;
    }, 'the event lag to settle');
  });

  it('with two replicas, applies each progress and completion once, also after the one following the stream is killed', async () => {
    const secondPort = await freePort();
    second = await startBridge(secondPort);
    const sid = await client.session();
    const ids = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        client.createTask(sid, 'render_report', { n: i, steps: 4, stepMs: 300 }, { progressToken: `r-${i}` }),
      ),
    );
    const results = await Promise.all(ids.map((taskId) => client.openResult(sid, taskId)));
    await waitFor(async () => {
      const progress = await Promise.all(ids.map(async (id) => (await reports.getJob(id))?.progress));
      return progress.every((p) => typeof p === 'object' && p !== null);
    }, 'every job to report progress');
    // The first bridge took the queue's lease first; the second takes over once it lapses.
    await bridge?.stop('SIGKILL');
    for (const [i, taskId] of ids.entries()) {
      const messages = await (results[i] as (typeof results)[number]).messages(30_000);
      expect(progressOf(messages)).toEqual(pages(4).map((p) => [`r-${i}`, ...p]));
      expect(resultOf(messages).structuredContent).toEqual({ pages: i * 2 });
      expect(ran(reportsWorker, taskId)).toBe(1);
    }
    bridge = await startBridge(bridgePort);
  }, 60_000);

  it('removes the waiting job of a task cancelled while no bridge ran; the existing worker never runs it', async () => {
    const sid = await client.session();
    const cancelled = await client.createTask(sid, 'greet', { n: 1 });
    await waitFor(async () => (await greetings.getJobState(cancelled)) === 'waiting', 'the job to be queued');
    // Stopped cleanly: each hands its tasks back to the queue of bridged tasks.
    const stopped = await Promise.all([bridge, second].map((proc) => proc?.stop('SIGTERM', 10_000) ?? 0));
    expect(stopped).toEqual([0, 0]);
    second = undefined;
    const answer = await client.request(sid, 'tasks/cancel', { taskId: cancelled });
    expect(answer.result?.status).toBe('cancelled');
    expect(await greetings.getJobState(cancelled)).toBe('waiting');

    bridge = await startBridge(bridgePort);
    await waitFor(async () => (await greetings.getJob(cancelled)) === undefined, 'the waiting job to be removed');
    const counts = await greetings.getJobCounts('waiting', 'delayed', 'prioritized', 'active');
    expect(counts).toEqual({ waiting: 0, delayed: 0, prioritized: 0, active: 0 });

    const worker = await forkLegacyWorker(legacy.url, 'greetings');
    extra.push(worker);
    const later = await client.createTask(sid, 'greet', { n: 2 });
    expect((await client.until(sid, later, terminal, 'the later task to end')).status).toBe('completed');
    expect(ran(worker, later)).toBe(1);
    expect(ran(worker, cancelled)).toBe(0);
    expect((await client.task(sid, cancelled)).status).toBe('cancelled');
  }, 60_000);

  it('reconciles by job state, and says so, when its stored position was trimmed from the stream', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'render_report', { n: 9, steps: 2, stepMs: 300 });
    await waitFor(async () => (await reports.getJobState(taskId)) === 'active', 'the job to start');
    await bridge?.stop('SIGKILL');
    await waitFor(async () => (await reports.getJobState(taskId)) === 'completed', 'the job to complete', 20_000);
    // BullMQ trims the stream to about 10,000 entries; here everything but the newest entry goes,
    // the bridge's position with it.
    const redis = new Redis(legacy.url);
    await redis.xtrim('legacy:reports:events', 'MAXLEN', 1);
    await redis.quit();

    bridge = await startBridge(bridgePort);
    const ended = await client.until(sid, taskId, terminal, 'the task to end after the restart');
    expect(ended.status).toBe('completed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.structuredContent).toEqual({ pages: 18 });
    expect(bridge.output()).toMatch(/no usable position in the event stream/);
  }, 60_000);
});
