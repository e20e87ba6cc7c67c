import { type ForkedProcess, freePort, type RedisServer, scrape, startRedis } from '@taskgate/test-harness';
import { Queue } from 'bullmq';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, request2026, terminal } from './mcp-client.js';
import {
  bridgeConfig,
  counterSum,
  forkBridge,
  forkLegacyWorker,
  removeConfigs,
  waitFor,
  writeConfig,
} from './support.js';

// Two gateways behind a proxy, on taskgate's Redis; a bridge (the CLI's `taskgate bridge`) and plain BullMQ
// workers (a process that imports only bullmq) on a separate Redis, the legacy one.

let pods: Pods;
let legacy: RedisServer;
let configPath: string;
let bridge: ForkedProcess;
let bridgeMetricsPort: number;
let reportsWorker: ForkedProcess;
const extra: ForkedProcess[] = [];
let reports: Queue;
let greetings: Queue;

beforeAll(async () => {
  legacy = await startRedis();
  // Beside the shared config: an optional report tool that answers 2026-07-28 clients inline when it is quick.
  const config = bridgeConfig(legacy.url);
  const [render] = config.tools as Json[];
  const quick = { ...render, name: 'quick_report', taskSupport: 'optional', inlineWaitMs: 5000 };
  configPath = writeConfig({ ...config, tools: [...(config.tools as Json[]), quick] });
  reportsWorker = await forkLegacyWorker(legacy.url, 'reports');
  bridgeMetricsPort = await freePort();
  pods = await startPods(
    'bridge',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      bridge = await forkBridge({ ...env, TASKGATE_METRICS_PORT: String(bridgeMetricsPort) }, configPath);
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
  await bridge?.stop('SIGTERM', 5000);
  await pods?.stop();
  await legacy?.stop();
  removeConfigs();
}, 60_000);

afterEach(() => {
  pods.proxy.route = undefined;
});

const endpoint = (): string => `${pods.proxy.origin}/mcp`;
const client = mcpClient(endpoint);
const { session, request, createTask, task, until } = client;

describe('bridge: existing BullMQ queues as MCP tools', () => {
  it('lists the bridged tools on every gateway with their schema, and refuses invalid arguments before enqueuing', async () => {
    const sid = await session();
    for (const pod of [0, 1]) {
      pods.proxy.route = () => pod;
      const tools = (await request(sid, 'tools/list', {})).result?.tools as Json[];
      const render = tools.find((tool) => tool.name === 'render_report');
      const config = bridgeConfig(legacy.url).tools as Json[];
      expect(render).toEqual({
        name: 'render_report',
        description: 'Renders a report.',
        inputSchema: config[0]?.inputSchema,
        outputSchema: config[0]?.outputSchema,
        execution: { taskSupport: 'required' },
      });
      expect(tools.find((tool) => tool.name === 'greet')?.execution).toEqual({ taskSupport: 'optional' });
    }
    const before = await reports.getJobCounts();
    const refused = await request(sid, 'tools/call', { name: 'render_report', arguments: { n: 'x' }, task: {} });
    expect(refused.error?.code).toBe(-32602);
    expect(await reports.getJobCounts()).toEqual(before);
  });

  it('runs a task through the existing worker: created on one gateway, progress and result on the other', async () => {
    const sid = await session();
    const handedOff = await counterSum(bridgeMetricsPort, 'taskgate_bridge_jobs_handed_off_total');
    pods.proxy.route = () => 0;
    const taskId = await createTask(sid, 'render_report', { n: 3, steps: 3, stepMs: 150 }, { progressToken: 'p-1' });
    pods.proxy.route = () => 1;
    const messages = await (await client.openResult(sid, taskId)).messages();
    expect(progressOf(messages)).toEqual([
      ['p-1', 1, 3, 'page 1 of 3'],
      ['p-1', 2, 3, 'page 2 of 3'],
      ['p-1', 3, 3, 'page 3 of 3'],
    ]);
    const result = messages.find((m) => m.id === 7)?.result as Json;
    expect(result.content).toEqual([{ type: 'text', text: '{"pages":6}' }]);
    expect(result.structuredContent).toEqual({ pages: 6 });
    expect((await task(sid, taskId)).status).toBe('completed');
    // One job, id = task id, with the configured name, mapped data and options.
    const job = await reports.getJob(taskId);
    expect(job?.name).toBe('render');
    expect(job?.data).toEqual({ n: 3, steps: 3, stepMs: 150, origin: 'mcp' });
    expect(job?.opts.attempts).toBe(2);
    expect(await counterSum(bridgeMetricsPort, 'taskgate_bridge_jobs_handed_off_total')).toBe(handedOff + 1);
    const scraped = await scrape(`http://127.0.0.1:${bridgeMetricsPort}/metrics`);
    expect(scraped.types.get('taskgate_bridge_event_lag_seconds')).toBe('gauge');
    expect(
      scraped.value('taskgate_bridge_completions_applied_total', { tool: 'render_report', outcome: 'completed' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it("answers a quick job inline to a 2026-07-28 client (the tool's inlineWaitMs), a slower one as a task", async () => {
    const inline = await request2026(endpoint(), 'tools/call', { name: 'quick_report', arguments: { n: 2 } });
    expect(inline).toMatchObject({
      resultType: 'complete',
      content: [{ type: 'text', text: '{"pages":4}' }],
      structuredContent: { pages: 4 },
    });
    const slower = { name: 'quick_report', arguments: { n: 1, steps: 2, stepMs: 3000 } };
    const created = await request2026(endpoint(), 'tools/call', slower);
    expect(created).toMatchObject({ resultType: 'task', status: 'working' });
    let done: Json = {};
    await waitFor(async () => {
      done = await request2026(endpoint(), 'tasks/get', { taskId: created.taskId });
      return done.status === 'completed';
    }, 'the slower job');
    expect(done.result).toMatchObject({ structuredContent: { pages: 2 } });
  }, 30_000);

  it('fails the task with failedReason once the job failed its last attempt', async () => {
    const sid = await session();
    const taskId = await createTask(sid, 'render_report', { n: 4, failTimes: 5 });
    const ended = await until(sid, taskId, terminal, 'the task to end');
    expect(ended.status).toBe('failed');
    const result = (await request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.isError).toBe(true);
    expect(result.content).toEqual([{ type: 'text', text: 'printer jammed on report 4' }]);
    const job = await reports.getJob(taskId);
    expect(job?.attemptsMade).toBe(2);
    expect(reportsWorker.output().match(new RegExp(`ran ${taskId} `, 'g'))?.length).toBe(2);
  });

  it('keeps a task of a queue whose worker is down working and queued, removes its job on cancel, and completes once a worker starts', async () => {
    const sid = await session();
    const cancelled = await createTask(sid, 'greet', { n: 1 });
    const waiting = await createTask(sid, 'greet', { n: 2 });
    for (const taskId of [cancelled, waiting]) {
      const queued = await until(sid, taskId, (t) => /queued/i.test(String(t.statusMessage)), 'queued');
      expect(queued.status).toBe('working');
    }
    expect(await greetings.getJobState(cancelled)).toBe('waiting');
    const answer = await request(sid, 'tasks/cancel', { taskId: cancelled });
    expect(answer.result?.status).toBe('cancelled');
    await waitFor(async () => (await greetings.getJob(cancelled)) === undefined, 'the waiting job to be removed');
    expect((await task(sid, waiting)).status).toBe('working');

    extra.push(await forkLegacyWorker(legacy.url, 'greetings'));
    const done = await until(sid, waiting, terminal, 'the queued task to end');
    expect(done.status).toBe('completed');
    const result = (await request(sid, 'tasks/result', { taskId: waiting })).result as Json;
    expect(result.content).toEqual([{ type: 'text', text: 'hello 2' }]);
    expect((await task(sid, cancelled)).status).toBe('cancelled');
  });

  it('cancels a task whose job is active at once; the job runs on in its worker and its completion is discarded', async () => {
    const sid = await session();
    const taskId = await createTask(sid, 'render_report', { n: 5, steps: 6, stepMs: 200 });
    await waitFor(async () => (await reports.getJobState(taskId)) === 'active', 'the job to start');
    const answer = await request(sid, 'tasks/cancel', { taskId });
    expect(answer.result?.status).toBe('cancelled');
    await waitFor(async () => (await reports.getJobState(taskId)) === 'completed', 'the job to complete', 20_000);
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect((await task(sid, taskId)).status).toBe('cancelled');
  });

  it('delivers the result of a job that finished while the bridge was killed with -9 and restarted', async () => {
    const sid = await session();
    const taskId = await createTask(sid, 'render_report', { n: 7, steps: 4, stepMs: 300 });
    await waitFor(async () => (await reports.getJobState(taskId)) === 'active', 'the job to start');
    await bridge.stop('SIGKILL');
    await waitFor(async () => (await reports.getJobState(taskId)) === 'completed', 'the job to complete', 20_000);
    expect((await task(sid, taskId)).status).toBe('working');
    bridge = await forkBridge({ ...pods.env, TASKGATE_METRICS_PORT: String(bridgeMetricsPort) }, configPath);
    const ended = await until(sid, taskId, terminal, 'the task to end after the restart');
    expect(ended.status).toBe('completed');
    const result = (await request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.structuredContent).toEqual({ pages: 14 });
    // The restarted bridge added no second job: the worker ran it once.
    expect(reportsWorker.output().match(new RegExp(`ran ${taskId} `, 'g'))?.length).toBe(1);
  });

  it('with two bridge replicas, applies each completion once', async () => {
    const secondPort = await freePort();
    const second = await forkBridge({ ...pods.env, TASKGATE_METRICS_PORT: String(secondPort) }, configPath);
    extra.push(second);
    const metric = 'taskgate_bridge_completions_applied_total';
    const completed = 'taskgate_tasks_finished_total';
    const sum = async (name: string) =>
      (await counterSum(bridgeMetricsPort, name)) + (await counterSum(secondPort, name));
    const [appliedBefore, completedBefore] = [await sum(metric), await sum(completed)];
    const sid = await session();
    const ids = await Promise.all(
      Array.from({ length: 8 }, (_, index) => createTask(sid, 'render_report', { n: index, steps: 1, stepMs: 100 })),
    );
    for (const taskId of ids) expect((await until(sid, taskId, terminal, 'the task to end')).status).toBe('completed');
    await waitFor(async () => (await sum(metric)) >= appliedBefore + ids.length, 'the metrics');
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(await sum(metric)).toBe(appliedBefore + ids.length);
    expect(await sum(completed)).toBe(completedBefore + ids.length);
    for (const taskId of ids) expect(reportsWorker.output().match(new RegExp(`ran ${taskId} `, 'g'))?.length).toBe(1);
  });
});
