import {
  type ForkedProcess,
  freePort,
  type PersistentRedis,
  scrape,
  startPersistentRedis,
} from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, terminal } from '../mcp-client.js';
import { celeryVenv, spawnPython, startCeleryWorker } from '../python-processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from '../support.js';
import { celeryConfig, runs } from './support.js';

// Existing Celery tasks (test/bridge/celery/tasks.py, importing only celery) as MCP task tools: a real Celery
// worker (pinned, from PyPI) on its own Redis — the broker on database 2, the results on database 3 — and the
// bridge between it and two gateways on taskgate's Redis.

let pods: Pods;
let celeryRedis: PersistentRedis;
let venv: string;
let broker: string;
let backend: string;
let configPath: string;
let worker: ForkedProcess | undefined;
const workers: ForkedProcess[] = [];
const bridges: ForkedProcess[] = [];
let bridgePort: number;
let backendRedis: Redis;
let brokerRedis: Redis;
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

const DRAIN = { TASKGATE_DRAIN_TIMEOUT_MS: '1000' };
const startBridge = async (port: number): Promise<ForkedProcess> => {
  const bridge = await forkBridge({ ...pods.env, ...DRAIN, TASKGATE_METRICS_PORT: String(port) }, configPath);
  bridges.push(bridge);
  return bridge;
};
const startWorker = async (): Promise<ForkedProcess> => {
  worker = await startCeleryWorker(venv, broker, backend);
  workers.push(worker);
  return worker;
};
/** Runs of the task by every Celery worker these tests started. */
const ran = (taskId: string): number => workers.reduce((sum, proc) => sum + runs(proc, taskId), 0);
const resultOf = (messages: Json[]): Json => messages.find((m) => m.id === 7)?.result as Json;
const stateOf = async (taskId: string): Promise<string | undefined> => {
  const text = await backendRedis.get(`celery-task-meta-${taskId}`);
  return text === null ? undefined : (JSON.parse(text) as { status: string }).status;
};
/** Whether the task's message waits in the `celery` queue (kombu keeps priorities 3-5 in `celery\x06\x163`). */
const queued = async (taskId: string): Promise<boolean> => {
  const lists = await Promise.all(['celery', 'celery\x06\x163'].map((list) => brokerRedis.lrange(list, 0, -1)));
  return lists.flat().some((message) => message.includes(taskId));
};

beforeAll(async () => {
  [venv, celeryRedis] = await Promise.all([celeryVenv(), startPersistentRedis()]);
  broker = `redis://127.0.0.1:${celeryRedis.port}/2`;
  backend = `redis://127.0.0.1:${celeryRedis.port}/3`;
  brokerRedis = new Redis(broker);
  backendRedis = new Redis(backend);
  // The last test stops the Celery Redis for a while.
  for (const redis of [brokerRedis, backendRedis]) redis.on('error', () => {});
  configPath = writeConfig(celeryConfig(broker, backend));
  bridgePort = await freePort();
  // One after the other: started together on a busy machine, the gateways could miss their start deadline.
  pods = await startPods(
    'bridge-celery',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      const bridge = await forkBridge({ ...env, ...DRAIN, TASKGATE_METRICS_PORT: String(bridgePort) }, configPath);
      bridges.push(bridge);
      return bridge;
    },
  );
  await startWorker();
}, 300_000);

afterAll(async () => {
  await client.close();
  await Promise.all(workers.map((proc) => proc.stop('SIGTERM', 5000)));
  await Promise.all(bridges.map((proc) => proc.stop('SIGTERM', 5000)));
  await pods?.stop();
  await Promise.all([brokerRedis?.quit(), backendRedis?.quit()]);
  await celeryRedis?.stop();
  removeConfigs();
}, 60_000);

describe('bridge: Celery tasks as MCP task tools', () => {
  it('runs a Celery task once with the mapped args and kwargs, and maps its return value', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'render_pdf', { path: '/r/q3.pdf', dpi: 300 });
    const ended = await client.until(sid, taskId, terminal, 'the task to end');
    expect(ended.status).toBe('completed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.structuredContent).toEqual({ path: '/r/q3.pdf', dpi: 300, pages: 9 });
    expect(await stateOf(taskId)).toBe('SUCCESS');
    expect(ran(taskId)).toBe(1);
    const scraped = await scrape(`http://127.0.0.1:${bridgePort}/metrics`);
    expect(scraped.value('taskgate_bridge_jobs_handed_off_total', { tool: 'render_pdf' })).toBe(1);
    expect(scraped.value('taskgate_bridge_completions_applied_total', { tool: 'render_pdf' })).toBe(1);
  });

  it('reports a custom state with meta as progress notifications and statusMessage', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'paginate', { pages: 3, step_ms: 200 }, { progressToken: 'p-1' });
    const result = await client.openResult(sid, taskId);
    await waitFor(async () => /^page \d$/.test(String((await client.task(sid, taskId)).statusMessage)), 'a page');
    const messages = await result.messages();
    expect(progressOf(messages)).toEqual([1, 2, 3].map((page) => ['p-1', page, 3, `page ${page}`]));
    expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":3}' }]);
  });

  it('ends a failed Celery task as a tool error with the exception, the traceback only in the bridge log', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'explode', { reason: 'no ink' });
    const ended = await client.until(sid, taskId, terminal, 'the task to end');
    expect(ended.status).toBe('failed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'ValueError: no ink' }], isError: true });
    expect(JSON.stringify(result)).not.toMatch(/Traceback/);
    const logged = new RegExp(
      `"taskId":"${taskId}"[^\n]*"traceback":"Traceback[^\n]*ValueError: no ink[^\n]*celery task failed`,
    );
    await waitFor(() => bridges.some((proc) => logged.test(proc.output())), 'the traceback in the bridge log');
  });

  it('shows a retry with its reason, then the result of the attempt that succeeded', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'flaky', { fail_times: 1, countdown_s: 1.5 });
    const retrying = await client.until(
      sid,
      taskId,
      (task) => task.statusMessage !== undefined && String(task.statusMessage).startsWith('Retrying'),
      'the retry',
    );
    expect(retrying.statusMessage).toBe('Retrying after ConnectionError: printer offline');
    expect((await client.until(sid, taskId, terminal, 'the task to end')).status).toBe('completed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.content).toEqual([{ type: 'text', text: 'printed after 1 retries' }]);
    expect(ran(taskId)).toBe(2);
  });

  it('cancels a running task at once and terminates it in the worker (cancel: terminate)', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'sleepy', { seconds: 20 });
    await waitFor(() => ran(taskId) === 1, 'the task to run');
    // This task tracks STARTED (`track_started=True`): the worker's name shows.
    const running = await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Running'), 'STARTED');
    expect(running.statusMessage).toMatch(/^Running on Celery worker celery@\S+$/);
    const answer = await client.request(sid, 'tasks/cancel', { taskId });
    expect(answer.result?.status).toBe('cancelled');
    await waitFor(async () => (await stateOf(taskId)) === 'REVOKED', 'the worker to terminate it', 10_000);
    expect(worker?.output()).toMatch(new RegExp(`Terminating ${taskId}`));
    expect(worker?.output()).not.toMatch(new RegExp(`finished ${taskId}`));
    expect((await client.task(sid, taskId)).status).toBe('cancelled');
  });

  it('ends a task cancelled when a revoke made on the Celery side ends its Celery task', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'sleepy', { seconds: 20 });
    await waitFor(() => ran(taskId) === 1, 'the task to run');
    const revoke = `from celery import Celery; Celery(broker='${broker}').control.revoke('${taskId}', terminate=True)`;
    expect(await spawnPython(venv, ['-c', revoke], '.').exited).toBe(0);
    const ended = await client.until(sid, taskId, terminal, 'the task to end');
    expect(ended.status).toBe('cancelled');
    expect(ended.statusMessage).toBe('Revoked in Celery (TaskRevokedError: terminated)');
  });

  it('applies what happened while the bridge was killed with -9, once, after it restarts', async () => {
    const sid = await client.session();
    // Its result will have expired (`result_expires`) by the time a bridge looks again.
    const expiring = await client.createTask(sid, 'paginate', { pages: 3, step_ms: 1000 });
    const taskId = await client.createTask(sid, 'paginate', { pages: 8, step_ms: 400 }, { progressToken: 'k-1' });
    const result = await client.openResult(sid, taskId);
    const paging = async (id: string): Promise<boolean> =>
      /^page \d$/.test(String((await client.task(sid, id)).statusMessage));
    await waitFor(() => paging(expiring), 'a page of the other applied');
    await waitFor(() => paging(taskId), 'a page applied');
    const [bridge] = bridges.splice(0, 1);
    await bridge?.stop('SIGKILL');
    await waitFor(async () => (await stateOf(taskId)) === 'SUCCESS', 'the Celery task to succeed', 20_000);
    await waitFor(async () => (await stateOf(expiring)) === 'SUCCESS', 'the other to succeed', 20_000);
    await backendRedis.del(`celery-task-meta-${expiring}`);
    expect((await client.task(sid, taskId)).status).toBe('working');

    await startBridge(bridgePort);
    const messages = await result.messages(30_000);
    // The pages reported while no bridge ran are lost (the key keeps the latest state only); none comes twice.
    const pages = progressOf(messages).map(([, page]) => page as number);
    expect(pages[0]).toBe(1);
    expect(pages.every((page, i) => i === 0 || page > (pages[i - 1] as number))).toBe(true);
    expect(pages.length).toBeLessThan(8);
    expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":8}' }]);
    expect(messages.filter((m) => m.id === 7)).toHaveLength(1);
    expect(ran(taskId)).toBe(1);
    const expired = await client.until(sid, expiring, terminal, 'the expired task to end');
    expect(expired.status).toBe('failed');
    expect(expired.statusMessage).toMatch(/The Celery result expired from the result backend \(result_expires\)/);
  }, 60_000);

  it('keeps tasks queued while no worker runs, takes a cancelled one out of the queue, runs the rest later', async () => {
    await worker?.stop('SIGTERM', 10_000);
    const sid = await client.session();
    const waiting = await client.createTask(sid, 'render_pdf', { path: '/later.pdf' });
    const cancelled = await client.createTask(sid, 'greet', { path: '/never.pdf' });
    for (const taskId of [waiting, cancelled]) {
      const task = await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Queued'), 'queued');
      expect(task.statusMessage).toBe("Queued in Celery queue 'celery': waiting for a worker");
    }
    expect(await queued(cancelled)).toBe(true);
    expect((await client.request(sid, 'tasks/cancel', { taskId: cancelled })).result?.status).toBe('cancelled');
    await waitFor(async () => !(await queued(cancelled)), 'the message to leave the queue');
    expect(await queued(waiting)).toBe(true);

    await startWorker();
    expect((await client.until(sid, waiting, terminal, 'the waiting task to end')).status).toBe('completed');
    expect(ran(waiting)).toBe(1);
    expect(ran(cancelled)).toBe(0);
    expect(await stateOf(cancelled)).toBeUndefined();
    expect((await client.task(sid, cancelled)).status).toBe('cancelled');
  }, 60_000);

  it('with two bridge replicas, applies each state and outcome once', async () => {
    const secondPort = await freePort();
    await startBridge(secondPort);
    const applied = async (): Promise<number> => {
      const scraped = await Promise.all(
        [bridgePort, secondPort].map((port) => scrape(`http://127.0.0.1:${port}/metrics`)),
      );
      return scraped.reduce(
        (sum, metrics) => sum + metrics.value('taskgate_bridge_completions_applied_total', { tool: 'paginate' }),
        0,
      );
    };
    const before = await applied();
    const sid = await client.session();
    const ids = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        client.createTask(sid, 'paginate', { pages: 2, step_ms: 200 }, { progressToken: `two-${i}` }),
      ),
    );
    const results = await Promise.all(ids.map((taskId) => client.openResult(sid, taskId)));
    for (const [i, taskId] of ids.entries()) {
      const messages = await (results[i] as (typeof results)[number]).messages(30_000);
      expect(progressOf(messages)).toEqual([1, 2].map((page) => [`two-${i}`, page, 2, `page ${page}`]));
      expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":2}' }]);
      expect(ran(taskId)).toBe(1);
    }
    expect((await applied()) - before).toBe(ids.length);
  }, 60_000);

  it('keeps a task working while the broker is down, saying so, and sends it once the broker is back', async () => {
    await celeryRedis.kill();
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'render_pdf', { path: '/outage.pdf' });
    const waiting = await client.until(
      sid,
      taskId,
      (t) => String(t.statusMessage).startsWith('The Celery broker is unreachable'),
      'the broker outage to show',
    );
    expect(waiting.status).toBe('working');
    await celeryRedis.restart();
    const ended = await client.until(sid, taskId, terminal, 'the task to end after the outage');
    expect(ended.status).toBe('completed');
    expect(ran(taskId)).toBe(1);
  }, 60_000);
});
