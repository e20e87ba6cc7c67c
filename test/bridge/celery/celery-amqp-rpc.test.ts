import { type ForkedProcess, freePort, type RabbitMQ, scrape, startRabbitMQ } from '@taskgate/test-harness';
import { connect, type GetMessage } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../../gateway/fixtures/processes.js';
import { type Json, mcpClient, progressOf, terminal } from '../mcp-client.js';
import { celeryVenv, startCeleryWorker } from '../python-processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from '../support.js';
import { celeryConfig, runs } from './support.js';

// The Celery tasks of test/bridge/celery/tasks.py on their default broker: a real RabbitMQ (private port and
// node name) and a real Celery worker (prefork) on it with Celery's rpc:// result backend. The bridge publishes
// each task as kombu's AMQP transport does and applies the states Celery sends to its results queue.

let pods: Pods;
let rabbit: RabbitMQ;
let venv: string;
let configPath: string;
let worker: ForkedProcess | undefined;
const workers: ForkedProcess[] = [];
const bridges: ForkedProcess[] = [];
let bridgePort: number;
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

// Traced: spans go to the bridge's standard output (OpenTelemetry's console exporter).
const DRAIN = { TASKGATE_DRAIN_TIMEOUT_MS: '1000', OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '100' };
const startBridge = async (port: number): Promise<ForkedProcess> => {
  const bridge = await forkBridge({ ...pods.env, ...DRAIN, TASKGATE_METRICS_PORT: String(port) }, configPath);
  bridges.push(bridge);
  return bridge;
};
const startWorker = async (): Promise<ForkedProcess> => {
  worker = await startCeleryWorker(venv, rabbit.url, 'rpc://');
  workers.push(worker);
  return worker;
};
/** Runs of the task by every Celery worker these tests started. */
const ran = (taskId: string): number => workers.reduce((sum, proc) => sum + runs(proc, taskId), 0);
const resultOf = (messages: Json[]): Json => messages.find((m) => m.id === 7)?.result as Json;
/** The message of task `taskId` in `queue`, read without taking it: every message read goes back. */
async function peek(url: string, queue: string, taskId: string): Promise<GetMessage> {
  const connection = await connect(url);
  try {
    const channel = await connection.createChannel();
    const read: GetMessage[] = [];
    for (let got = await channel.get(queue); got !== false; got = await channel.get(queue)) {
      read.push(got);
      if (got.properties.correlationId === taskId) break;
    }
    for (const got of read) channel.nack(got, false, true);
    await channel.close();
    const found = read.find((got) => got.properties.correlationId === taskId);
    if (found === undefined) throw new Error(`no message of ${taskId} in ${queue}`);
    return found;
  } finally {
    await connection.close();
  }
}
const metric = async (port: number, name: string, tool: string): Promise<number> =>
  (await scrape(`http://127.0.0.1:${port}/metrics`)).value(name, { tool });

beforeAll(async () => {
  [venv, rabbit] = await Promise.all([celeryVenv(), startRabbitMQ()]);
  configPath = writeConfig(celeryConfig(rabbit.url, 'rpc'));
  bridgePort = await freePort();
  pods = await startPods(
    'bridge-celery-amqp',
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
  await rabbit?.stop();
  removeConfigs();
}, 60_000);

describe('bridge: Celery on RabbitMQ with the rpc:// result backend', () => {
  it('publishes the task once, confirmed, and applies its result from the results queue', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'render_pdf', { path: '/r/q3.pdf', dpi: 300 });
    const ended = await client.until(sid, taskId, terminal, 'the task to end');
    expect(ended.status).toBe('completed');
    const result = (await client.request(sid, 'tasks/result', { taskId })).result as Json;
    expect(result.structuredContent).toEqual({ path: '/r/q3.pdf', dpi: 300, pages: 9 });
    expect(ran(taskId)).toBe(1);
    expect(await metric(bridgePort, 'taskgate_bridge_jobs_handed_off_total', 'render_pdf')).toBe(1);
    expect(await metric(bridgePort, 'taskgate_bridge_completions_applied_total', 'render_pdf')).toBe(1);
  });

  it('reports a custom state with meta as progress notifications, in order', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'paginate', { pages: 3, step_ms: 200 }, { progressToken: 'p-1' });
    const result = await client.openResult(sid, taskId);
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
    const logged = new RegExp(`"taskId":"${taskId}"[^\n]*"traceback":"Traceback[^\n]*ValueError: no ink`);
    await waitFor(() => bridges.some((proc) => logged.test(proc.output())), 'the traceback in the bridge log');
  });

  it('cancels a running task at once and terminates it in the worker through celery.pidbox', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'sleepy', { seconds: 20 });
    await waitFor(() => ran(taskId) === 1, 'the task to run');
    const running = await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Running'), 'STARTED');
    expect(running.statusMessage).toMatch(/^Running on Celery worker celery@\S+$/);
    expect((await client.request(sid, 'tasks/cancel', { taskId })).result?.status).toBe('cancelled');
    await waitFor(() => new RegExp(`Terminating ${taskId}`).test(worker?.output() ?? ''), 'the worker to terminate it');
    expect(worker?.output()).not.toMatch(new RegExp(`finished ${taskId}`));
    expect((await client.task(sid, taskId)).status).toBe('cancelled');
  });

  it('cancels a queued task that a worker holds: the worker heard the revoke and never runs it', async () => {
    const sid = await client.session();
    // Four sleepers keep the worker's three children busy; the next task waits, prefetched by the worker. They
    // sleep long enough for a loaded machine to get the next task to the worker before a child is free.
    const sleepers = await Promise.all([0, 1, 2, 3].map(() => client.createTask(sid, 'sleepy', { seconds: 12 })));
    await waitFor(() => sleepers.filter((id) => ran(id) === 1).length >= 3, 'the sleepers to run');
    const queued = await client.createTask(sid, 'render_pdf', { path: '/behind.pdf' });
    const received = new RegExp(`Task reports.render_pdf\\[${queued}\\] received`);
    await waitFor(() => received.test(worker?.output() ?? ''), 'the worker to hold it');
    expect(ran(queued)).toBe(0);
    expect((await client.request(sid, 'tasks/cancel', { taskId: queued })).result?.status).toBe('cancelled');
    await waitFor(() => new RegExp(`flagged as revoked: ${queued}`).test(worker?.output() ?? ''), 'the revoke heard');
    const discarded = new RegExp(`Discarding revoked task: reports.render_pdf\\[${queued}\\]`);
    await waitFor(() => discarded.test(worker?.output() ?? ''), 'the worker to discard it', 40_000);
    for (const id of sleepers) {
      expect((await client.until(sid, id, terminal, 'a sleeper to end', 40_000)).status).toBe('completed');
    }
    expect(ran(queued)).toBe(0);
    expect((await client.task(sid, queued)).status).toBe('cancelled');
  }, 90_000);

  it('applies the states sent while the bridge was killed with -9, each once, after it restarts', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'paginate', { pages: 8, step_ms: 400 }, { progressToken: 'k-1' });
    const result = await client.openResult(sid, taskId);
    await waitFor(async () => /^page \d$/.test(String((await client.task(sid, taskId)).statusMessage)), 'a page');
    const [bridge] = bridges.splice(0, 1);
    await bridge?.stop('SIGKILL');
    await waitFor(
      () => new RegExp(`Task reports.paginate\\[${taskId}\\] succeeded`).test(worker?.output() ?? ''),
      'the Celery task to succeed',
      20_000,
    );
    expect((await client.task(sid, taskId)).status).toBe('working');

    await startBridge(bridgePort);
    const messages = await result.messages(30_000);
    // The states waited in the durable results queue: none is lost but the one a kill may cut short, none twice.
    const pages = progressOf(messages).map(([, page]) => page as number);
    expect(pages.every((page, i) => i === 0 || page > (pages[i - 1] as number))).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(7);
    expect(resultOf(messages).content).toEqual([{ type: 'text', text: '{"pages":8}' }]);
    expect(messages.filter((m) => m.id === 7)).toHaveLength(1);
    expect(ran(taskId)).toBe(1);
  }, 60_000);

  it('keeps tasks queued while no worker runs; a cancelled one a later worker starts is revoked again', async () => {
    await worker?.stop('SIGTERM', 10_000);
    const sid = await client.session();
    const waiting = await client.createTask(sid, 'render_pdf', { path: '/later.pdf' });
    const cancelled = await client.createTask(sid, 'sleepy', { seconds: 20 });
    for (const taskId of [waiting, cancelled]) {
      const task = await client.until(sid, taskId, (t) => String(t.statusMessage).startsWith('Queued'), 'queued');
      expect(task.statusMessage).toBe("Queued in Celery queue 'celery': waiting for a worker");
    }
    // The message as kombu's AMQP transport would publish it, looked at and put back.
    const message = await peek(rabbit.url, 'celery', waiting);
    expect(message.properties).toMatchObject({
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      deliveryMode: 2,
      priority: 5,
      correlationId: waiting,
      replyTo: 'taskgate.celery.results',
      expiration: '600000',
    });
    expect(message.properties.headers).toMatchObject({ lang: 'py', task: 'reports.render_pdf', id: waiting });
    // The trace context in its headers is the bridge's publish span (a producer span).
    const [, traceId, spanId] =
      /^00-([0-9a-f]{32})-([0-9a-f]{16})-01$/.exec(message.properties.headers?.traceparent) ?? [];
    const span = new RegExp(`traceId: '${traceId}',[^]*?name: 'publish celery',\\s+id: '${spanId}',\\s+kind: 3`);
    await waitFor(() => bridges.some((proc) => span.test(proc.output())), 'the publish span');
    expect(message.fields).toMatchObject({ exchange: '', routingKey: 'celery' });
    expect(JSON.parse(message.content.toString())).toEqual([
      ['/later.pdf'],
      {},
      { callbacks: null, errbacks: null, chain: null, chord: null },
    ]);
    expect((await client.request(sid, 'tasks/cancel', { taskId: cancelled })).result?.status).toBe('cancelled');

    await startWorker();
    expect((await client.until(sid, waiting, terminal, 'the waiting task to end')).status).toBe('completed');
    expect(ran(waiting)).toBe(1);
    // No worker heard the revoke, and RabbitMQ cannot take one message out of a queue: the new worker starts it.
    // Its STARTED state makes the bridge revoke it again, and `cancel: terminate` stops it.
    await waitFor(() => ran(cancelled) === 1, 'the new worker to start the cancelled task');
    await waitFor(() => new RegExp(`Terminating ${cancelled}`).test(worker?.output() ?? ''), 'it to be terminated');
    const again = new RegExp(`"taskId":"${cancelled}"[^\\n]*celery task of a cancelled task revoked again`);
    expect(bridges.some((proc) => again.test(proc.output()))).toBe(true);
    expect(worker?.output()).not.toMatch(new RegExp(`finished ${cancelled}`));
    expect((await client.task(sid, cancelled)).status).toBe('cancelled');
  }, 90_000);

  it('with two bridge replicas, applies each state and outcome once', async () => {
    const secondPort = await freePort();
    await startBridge(secondPort);
    const applied = async (): Promise<number> => {
      const counts = await Promise.all(
        [bridgePort, secondPort].map((port) => metric(port, 'taskgate_bridge_completions_applied_total', 'paginate')),
      );
      return counts.reduce((sum, count) => sum + count, 0);
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

  it('keeps tasks working through a RabbitMQ restart, saying so, and finishes each once', async () => {
    const sid = await client.session();
    const running = await client.createTask(sid, 'sleepy', { seconds: 8 });
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
    expect((await client.task(sid, running)).status).toBe('working');
    await rabbit.start();
    for (const taskId of [running, later]) {
      expect((await client.until(sid, taskId, terminal, 'the task to end after the restart', 60_000)).status).toBe(
        'completed',
      );
      expect(ran(taskId)).toBe(1);
    }
  }, 120_000);
});
