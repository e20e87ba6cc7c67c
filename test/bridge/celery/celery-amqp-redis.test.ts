import {
  type ForkedProcess,
  freePort,
  type PersistentRedis,
  type RabbitMQ,
  startPersistentRedis,
  startRabbitMQ,
} from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, terminal } from '../mcp-client.js';
import { celeryVenv, startCeleryWorker } from '../python-processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from '../support.js';
import { celeryConfig, runs } from './support.js';

// The Celery tasks of test/bridge/celery/tasks.py with RabbitMQ as their broker and a Redis result backend:
// the bridge publishes on AMQP and reads and follows the states in Redis, as it does with a Redis broker.

let pods: Pods;
let rabbit: RabbitMQ;
let celeryRedis: PersistentRedis;
let backend: string;
let backendRedis: Redis;
let venv: string;
let worker: ForkedProcess | undefined;
const workers: ForkedProcess[] = [];
const bridges: ForkedProcess[] = [];
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

const ran = (taskId: string): number => workers.reduce((sum, proc) => sum + runs(proc, taskId), 0);
const resultOf = (messages: Json[]): Json => messages.find((m) => m.id === 7)?.result as Json;
const stateOf = async (taskId: string): Promise<string | undefined> => {
  const text = await backendRedis.get(`celery-task-meta-${taskId}`);
  return text === null ? undefined : (JSON.parse(text) as { status: string }).status;
};
const startWorker = async (): Promise<ForkedProcess> => {
  worker = await startCeleryWorker(venv, rabbit.url, backend);
  workers.push(worker);
  return worker;
};

beforeAll(async () => {
  [venv, rabbit, celeryRedis] = await Promise.all([celeryVenv(), startRabbitMQ(), startPersistentRedis()]);
  backend = `redis://127.0.0.1:${celeryRedis.port}/3`;
  backendRedis = new Redis(backend);
  const configPath = writeConfig(celeryConfig(rabbit.url, backend));
  const bridgePort = await freePort();
  pods = await startPods(
    'bridge-celery-amqp-redis',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      const bridge = await forkBridge(
        { ...env, TASKGATE_DRAIN_TIMEOUT_MS: '1000', TASKGATE_METRICS_PORT: String(bridgePort) },
        configPath,
      );
      bridges.push(bridge);
      return bridge;
    },
  );
}, 300_000);

afterAll(async () => {
  await client.close();
  await Promise.all(workers.map((proc) => proc.stop('SIGTERM', 5000)));
  await Promise.all(bridges.map((proc) => proc.stop('SIGTERM', 5000)));
  await pods?.stop();
  await backendRedis?.quit();
  await Promise.all([rabbit?.stop(), celeryRedis?.stop()]);
  removeConfigs();
}, 60_000);

describe('bridge: Celery on RabbitMQ with a Redis result backend', () => {
  it('declares the queue as Celery does, so a worker started later consumes it; a revoke nobody heard is said', async () => {
    const sid = await client.session();
    const waiting = await client.createTask(sid, 'render_pdf', { path: '/first.pdf' });
    const cancelled = await client.createTask(sid, 'greet', { path: '/unheard.pdf' });
    for (const taskId of [waiting, cancelled]) {
      const task = await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Queued'), 'queued');
      expect(task.statusMessage).toBe("Queued in Celery queue 'celery': waiting for a worker");
    }
    expect((await client.request(sid, 'tasks/cancel', { taskId: cancelled })).result?.status).toBe('cancelled');
    const unheard = new RegExp(`"taskId":"${cancelled}"[^\n]*"how":"revoked, no worker heard it"`);
    await waitFor(() => bridges.some((proc) => unheard.test(proc.output())), 'the unheard revoke in the log');

    await startWorker();
    expect((await client.until(sid, waiting, terminal, 'the waiting task to end')).status).toBe('completed');
    expect(ran(waiting)).toBe(1);
    await waitFor(async () => (await stateOf(cancelled)) === 'SUCCESS', 'the worker to run the cancelled one');
    expect((await client.task(sid, cancelled)).status).toBe('cancelled');
  }, 90_000);

  it('runs a task once and maps its result and its progress', async () => {
    const sid = await client.session();
    const rendered = await client.createTask(sid, 'render_pdf', { path: '/r/q3.pdf', dpi: 300 });
    const paged = await client.createTask(sid, 'paginate', { pages: 3, step_ms: 200 }, { progressToken: 'p-1' });
    const messages = await (await client.openResult(sid, paged)).messages();
    expect(progressOf(messages)).toEqual([1, 2, 3].map((page) => ['p-1', page, 3, `page ${page}`]));
    expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":3}' }]);
    expect((await client.until(sid, rendered, terminal, 'the task to end')).status).toBe('completed');
    const result = (await client.request(sid, 'tasks/result', { taskId: rendered })).result as Json;
    expect(result.structuredContent).toEqual({ path: '/r/q3.pdf', dpi: 300, pages: 9 });
    expect(await stateOf(rendered)).toBe('SUCCESS');
    expect(ran(rendered)).toBe(1);
  });

  it('ends a failed task as a tool error with the exception', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'explode', { reason: 'no ink' });
    expect((await client.until(sid, taskId, terminal, 'the task to end')).status).toBe('failed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result).toMatchObject({ content: [{ type: 'text', text: 'ValueError: no ink' }], isError: true });
  });

  it('cancels a running task and terminates it in the worker through celery.pidbox', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'sleepy', { seconds: 20 });
    await waitFor(() => ran(taskId) === 1, 'the task to run');
    await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Running on Celery worker'), 'STARTED');
    expect((await client.request(sid, 'tasks/cancel', { taskId })).result?.status).toBe('cancelled');
    await waitFor(async () => (await stateOf(taskId)) === 'REVOKED', 'the worker to terminate it', 10_000);
    expect(worker?.output()).toMatch(new RegExp(`Terminating ${taskId}`));
    expect((await client.task(sid, taskId)).status).toBe('cancelled');
  });

  it('keeps a task working through a RabbitMQ restart and finishes it once', async () => {
    const sid = await client.session();
    const running = await client.createTask(sid, 'paginate', { pages: 6, step_ms: 1000 }, { progressToken: 'r-1' });
    const result = await client.openResult(sid, running);
    await waitFor(() => ran(running) === 1, 'the task to run');
    await rabbit.shutdown();
    const later = await client.createTask(sid, 'render_pdf', { path: '/outage.pdf' });
    const waiting = await client.until(
      sid,
      later,
      (t) => String(t.statusMessage).startsWith('The Celery broker is unreachable'),
      'the outage to show',
    );
    expect(waiting.status).toBe('working');
    await rabbit.start();
    const messages = await result.messages(60_000);
    expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":6}' }]);
    expect((await client.until(sid, later, terminal, 'the later task to end', 60_000)).status).toBe('completed');
    expect(ran(running)).toBe(1);
    expect(ran(later)).toBe(1);
  }, 120_000);
});
