import { type ForkedProcess, freePort, type RabbitMQ, scrape, startRabbitMQ } from '@taskgate/test-harness';
import { connect } from 'amqplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Pods, startPods } from '../../gateway/fixtures/processes.js';
import { type Json, mcpClient, terminal } from '../mcp-client.js';
import { celeryVenv } from '../python-processes.js';
import { forkBridge, removeConfigs, waitFor, writeConfig } from '../support.js';
import { amqpConfig, published, requestLines, startRpcServer } from './support.js';

// A request/reply service behind RabbitMQ (test/bridge/amqp/rpc_server.py: pika, as RabbitMQ's RPC tutorial
// writes one, knowing nothing of taskgate) as MCP task tools: a private RabbitMQ node, the service, and the bridge
// between it and two gateways on taskgate's Redis.

let pods: Pods;
let rabbit: RabbitMQ;
let venv: string;
let configPath: string;
let service: ForkedProcess | undefined;
const services: ForkedProcess[] = [];
const bridges: ForkedProcess[] = [];
const ports: number[] = [];
const client = mcpClient(() => `${pods.proxy.origin}/mcp`);

// Traced: spans go to the bridge's standard output (OpenTelemetry's console exporter).
const DRAIN = { TASKGATE_DRAIN_TIMEOUT_MS: '1000', OTEL_TRACES_EXPORTER: 'console', OTEL_BSP_SCHEDULE_DELAY: '100' };
const startBridge = async (port: number): Promise<ForkedProcess> => {
  const bridge = await forkBridge({ ...pods.env, ...DRAIN, TASKGATE_METRICS_PORT: String(port) }, configPath);
  bridges.push(bridge);
  return bridge;
};
const startService = async (): Promise<ForkedProcess> => {
  service = await startRpcServer(venv, rabbit.url);
  services.push(service);
  return service;
};
/** A counter summed over the metrics of every bridge port these tests used (a killed bridge's are gone). */
const counter = async (name: string, labels: Record<string, string> = {}): Promise<number> => {
  const scraped = await Promise.all(
    ports.map((port) =>
      scrape(`http://127.0.0.1:${port}/metrics`).then(
        (one) => one.value(name, labels),
        () => 0,
      ),
    ),
  );
  return scraped.reduce((sum, value) => sum + value, 0);
};
const resultOf = async (sid: string, taskId: string): Promise<Json> =>
  (await client.request(sid, 'tasks/result', { taskId })).result as Json;
/** The task once it ended (a busy machine may take a while after a broker restart). */
const ended = async (sid: string, taskId: string): Promise<Json> => {
  let last: Json = {};
  await waitFor(
    async () => {
      last = await client.task(sid, taskId);
      return terminal(last);
    },
    'the task to end',
    60_000,
  );
  return last;
};

beforeAll(async () => {
  [venv, rabbit] = await Promise.all([celeryVenv(), startRabbitMQ()]);
  configPath = writeConfig(amqpConfig(rabbit.url));
  ports.push(await freePort());
  pods = await startPods(
    'bridge-amqp',
    { TASKGATE_CURSOR_SECRET: 'bridge-test-cursor-secret-0123456789', TASKGATE_POLL_INTERVAL_MS: '200' },
    async (env) => {
      const bridge = await forkBridge({ ...env, ...DRAIN, TASKGATE_METRICS_PORT: String(ports[0]) }, configPath);
      bridges.push(bridge);
      return bridge;
    },
  );
  await startService();
}, 300_000);

afterAll(async () => {
  await client.close();
  await Promise.all(services.map((proc) => proc.stop('SIGTERM', 5000)));
  await Promise.all(bridges.map((proc) => proc.stop('SIGTERM', 5000)));
  await pods?.stop();
  await rabbit?.stop();
  removeConfigs();
}, 60_000);

describe('bridge: a request/reply service behind RabbitMQ as MCP task tools', () => {
  it('publishes one persistent request with correlation_id = task id and reply_to, and maps the reply', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'fib', { n: 10 });
    expect((await ended(sid, taskId)).status).toBe('completed');
    expect((await resultOf(sid, taskId)).content).toEqual([{ type: 'text', text: '55' }]);
    const [line] = requestLines(services, taskId);
    expect(line).toMatch(
      new RegExp(
        `^request ${taskId} redelivered=False reply_to=taskgate.replies delivery_mode=2 ` +
          'content_type=application/json x_source=taskgate traceparent=00-[0-9a-f]{32}-[0-9a-f]{16}-01$',
      ),
    );
    expect(requestLines(services, taskId)).toHaveLength(1);
    // The trace context in the request's headers is the bridge's publish span (a producer span).
    const [, traceId, spanId] = /traceparent=00-([0-9a-f]{32})-([0-9a-f]{16})/.exec(line ?? '') ?? [];
    const span = new RegExp(`traceId: '${traceId}',[^]*?name: 'publish rpc_queue',\\s+id: '${spanId}',\\s+kind: 3`);
    await waitFor(() => bridges.some((proc) => span.test(proc.output())), 'the publish span');
    expect(await counter('taskgate_bridge_amqp_published_total', { tool: 'fib' })).toBe(1);
    expect(await counter('taskgate_bridge_amqp_replies_total', { tool: 'fib' })).toBe(1);
    expect(await counter('taskgate_bridge_completions_applied_total', { tool: 'fib' })).toBe(1);
    expect(await rabbit.ctl(['list_queues', 'name', 'durable'])).toMatch(/taskgate\.replies\s+true/);
  });

  it('sends text/plain as it is, and takes a text reply as text', async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'upper', { text: 'hello rabbit' });
    expect((await ended(sid, taskId)).status).toBe('completed');
    expect((await resultOf(sid, taskId)).content).toEqual([{ type: 'text', text: 'HELLO RABBIT' }]);
  });

  it("ends the task as a tool error when the reply has the tool's error field", async () => {
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'work', { op: 'fail', why: 'printer on fire' });
    const task = await ended(sid, taskId);
    expect(task.status).toBe('failed');
    expect(task.statusMessage).toBe('Tool failed: printer on fire');
    expect(await resultOf(sid, taskId)).toMatchObject({
      content: [{ type: 'text', text: 'printer on fire' }],
      isError: true,
    });
  });

  it('fails an unroutable request at once, naming the exchange and routing key; a missing exchange too', async () => {
    const sid = await client.session();
    const before = await counter('taskgate_bridge_amqp_unroutable_total', { tool: 'nowhere' });
    const taskId = await client.createTask(sid, 'nowhere', {});
    const task = await ended(sid, taskId);
    expect(task.status).toBe('failed');
    expect((await resultOf(sid, taskId)).content).toEqual([
      {
        type: 'text',
        text: "No queue is bound to routing key 'no_such_queue' on the default exchange: the request was not delivered",
      },
    ]);
    expect((await counter('taskgate_bridge_amqp_unroutable_total', { tool: 'nowhere' })) - before).toBe(1);
    const lost = await client.createTask(sid, 'lost', {});
    expect((await ended(sid, lost)).status).toBe('failed');
    expect((await resultOf(sid, lost)).content).toEqual([
      {
        type: 'text',
        text: "Exchange 'no.such.exchange' does not exist: the request to routing key 'rpc_queue' on exchange 'no.such.exchange' was not delivered",
      },
    ]);
  });

  it('cancels a task: the service gets the cancel message; its reply afterwards is acknowledged and discarded', async () => {
    const sid = await client.session();
    const late = await counter('taskgate_bridge_amqp_late_replies_total', { tool: 'work' });
    const taskId = await client.createTask(sid, 'work', { op: 'sleep', s: 2 });
    await waitFor(() => requestLines(services, taskId).length === 1, 'the service to take the request');
    expect((await client.request(sid, 'tasks/cancel', { taskId })).result?.status).toBe('cancelled');
    await waitFor(() => services.some((proc) => proc.output().includes(`cancel {"id":"${taskId}"}`)), 'the cancel');
    await waitFor(() => services.some((proc) => proc.output().includes(`replied ${taskId}`)), 'the late reply');
    await waitFor(
      async () => (await counter('taskgate_bridge_amqp_late_replies_total', { tool: 'work' })) === late + 1,
      'the late reply to be discarded',
    );
    expect((await client.task(sid, taskId)).status).toBe('cancelled');
    expect(await rabbit.ctl(['list_queues', 'name', 'messages'])).toMatch(/taskgate\.replies\s+0/);
  });

  it('fails a task with no reply in timeoutMs, naming the routing key; the reply after it is discarded', async () => {
    const sid = await client.session();
    const late = await counter('taskgate_bridge_amqp_late_replies_total', { tool: 'quick' });
    const taskId = await client.createTask(sid, 'quick', { op: 'sleep', s: 3 });
    const task = await ended(sid, taskId);
    expect(task.status).toBe('failed');
    expect((await resultOf(sid, taskId)).content).toEqual([
      { type: 'text', text: "No reply from routing key 'rpc_queue' within 1500 ms" },
    ]);
    await waitFor(
      async () => (await counter('taskgate_bridge_amqp_late_replies_total', { tool: 'quick' })) === late + 1,
      'the late reply to be discarded',
    );
    expect((await client.task(sid, taskId)).status).toBe('failed');
  });

  it('drops and counts a reply whose correlation_id names no request', async () => {
    const before = await counter('taskgate_bridge_amqp_unknown_replies_total', { connection: 'rabbit' });
    const connection = await connect(rabbit.url);
    const channel = await connection.createConfirmChannel();
    channel.sendToQueue('taskgate.replies', Buffer.from('{}'), { correlationId: 'not-a-task', persistent: true });
    await channel.waitForConfirms();
    await connection.close();
    await waitFor(
      async () =>
        (await counter('taskgate_bridge_amqp_unknown_replies_total', { connection: 'rabbit' })) === before + 1,
      'the unknown reply to be counted',
    );
  });

  it('keeps a task working while no service consumes, saying the request waits in the queue', async () => {
    await service?.stop('SIGTERM', 5000);
    const sid = await client.session();
    const taskId = await client.createTask(sid, 'fib', { n: 20 });
    const waiting = await client.until(
      sid,
      taskId,
      (t) => String(t.statusMessage).startsWith('The request waits'),
      'the request to wait in its queue',
    );
    expect(waiting.status).toBe('working');
    expect(waiting.statusMessage).toBe("The request waits in queue 'rpc_queue': no consumer is attached yet");
    await startService();
    expect((await ended(sid, taskId)).status).toBe('completed');
    expect((await resultOf(sid, taskId)).content).toEqual([{ type: 'text', text: '6765' }]);
    expect(published(services, taskId)).toBe(1);
  }, 60_000);

  it('lets every task finish through a RabbitMQ restart, working with a statusMessage meanwhile', async () => {
    const sid = await client.session();
    const inFlight = await client.createTask(sid, 'work', { op: 'sleep', s: 3 });
    await waitFor(() => requestLines(services, inFlight).length === 1, 'the service to take the request');
    await rabbit.shutdown();
    const during = await client.createTask(sid, 'fib', { n: 12 });
    for (const taskId of [inFlight, during]) {
      const down = await client.until(
        sid,
        taskId,
        (t) => String(t.statusMessage).startsWith("RabbitMQ connection 'rabbit' is down"),
        'the outage to show',
      );
      expect(down.status).toBe('working');
    }
    await rabbit.start();
    expect((await ended(sid, inFlight)).status).toBe('completed');
    expect((await resultOf(sid, inFlight)).content).toEqual([{ type: 'text', text: '{"slept":3}' }]);
    expect((await ended(sid, during)).status).toBe('completed');
    expect((await resultOf(sid, during)).content).toEqual([{ type: 'text', text: '144' }]);
    expect(published(services, during)).toBe(1);
  }, 120_000);

  it('applies the replies of requests out when the bridge was killed with -9, without publishing them again', async () => {
    await service?.stop('SIGTERM', 5000);
    const sid = await client.session();
    const ids = await Promise.all([1, 2, 3].map(() => client.createTask(sid, 'work', { op: 'sleep', s: 0.2 })));
    for (const taskId of ids) {
      await client.until(
        sid,
        taskId,
        (t) => String(t.statusMessage).startsWith('The request waits'),
        'the request out',
      );
    }
    const [bridge] = bridges.splice(0, 1);
    await bridge?.stop('SIGKILL');
    await startService();
    await waitFor(
      () => ids.every((taskId) => services.some((proc) => proc.output().includes(`replied ${taskId}`))),
      'the service to reply',
    );
    // The replies wait in the durable reply queue while no bridge runs.
    expect(await rabbit.ctl(['list_queues', 'name', 'messages'])).toMatch(/taskgate\.replies\s+3/);
    for (const taskId of ids) expect((await client.task(sid, taskId)).status).toBe('working');
    await startBridge(ports[0] as number);
    for (const taskId of ids) {
      expect((await ended(sid, taskId)).status).toBe('completed');
      expect((await resultOf(sid, taskId)).content).toEqual([{ type: 'text', text: '{"slept":0.2}' }]);
      expect(published(services, taskId)).toBe(1);
    }
    expect(await counter('taskgate_bridge_amqp_replies_total', { tool: 'work' })).toBe(3);
    expect(await counter('taskgate_bridge_amqp_published_total', { tool: 'work' })).toBe(0);
  }, 90_000);

  it('with two bridge replicas, applies each outcome once', async () => {
    ports.push(await freePort());
    await startBridge(ports[1] as number);
    const before = await counter('taskgate_bridge_amqp_replies_total', { tool: 'fib' });
    const applied = await counter('taskgate_bridge_completions_applied_total', { tool: 'fib' });
    const sid = await client.session();
    const ids = await Promise.all(Array.from({ length: 8 }, (_, i) => client.createTask(sid, 'fib', { n: i + 1 })));
    const fibs = [1, 1, 2, 3, 5, 8, 13, 21];
    for (const [i, taskId] of ids.entries()) {
      expect((await ended(sid, taskId)).status).toBe('completed');
      expect((await resultOf(sid, taskId)).content).toEqual([{ type: 'text', text: String(fibs[i]) }]);
      expect(published(services, taskId)).toBe(1);
    }
    expect((await counter('taskgate_bridge_amqp_replies_total', { tool: 'fib' })) - before).toBe(ids.length);
    expect((await counter('taskgate_bridge_completions_applied_total', { tool: 'fib' })) - applied).toBe(ids.length);
  }, 90_000);
});
