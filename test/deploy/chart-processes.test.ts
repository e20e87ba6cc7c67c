import { spawn } from 'node:child_process';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { RELATED_TASK_META_KEY } from '@taskgate/protocol';
import { freePort, type Haproxy, type RedisServer, startHaproxy, startRedis, taskPages } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PodProcess, type PodSpec, podSpec, startPod, waitForProbe } from './support/pods.js';
import { renderChart, repoRoot } from './support/render.js';

// The chart's wiring really starts a cluster: the rendered gateway and worker Deployments (two replicas each),
// their command, args and environment taken from the rendered objects, run as local processes against a real
// Redis behind HAProxy (round robin, no affinity, health checks on the rendered readiness probe). Then the
// SDK client's task flow and the MCP conformance suite run through HAProxy.

let redis: RedisServer;
let haproxy: Haproxy | undefined;
const pods: PodProcess[] = [];
const clients: Client[] = [];
let gateway: PodSpec;
let worker: PodSpec;

beforeAll(async () => {
  redis = await startRedis();
  const objects = await renderChart({
    releaseName: 'pods',
    set: {
      'gateway.replicas': '2',
      'worker.replicas': '2',
      'redis.url': redis.url,
      'secrets.cursorSecret': 'chart-processes-cursor-secret-0123456789',
      // Local processes share one address: no auth is safe only on loopback (the chart refuses it otherwise).
      'gateway.settings.auth': 'none',
      'gateway.settings.host': '127.0.0.1',
      'gateway.settings.pageSize': '2',
      'worker.settings.metricsHost': '127.0.0.1',
      'secrets.requestStateSecret': 'chart-processes-request-state-secret-0123',
      // The conformance fixture alone: the 2026-07-28 suite calls the first listed tool without a task.
      'worker.settings.tools': '@taskgate/conformance-fixture',
    },
  });
  gateway = podSpec(objects, 'pods-taskgate-gateway');
  worker = podSpec(objects, 'pods-taskgate-worker');
  for (const spec of [worker, gateway])
    for (let replica = 0; replica < spec.replicas; replica++)
      pods.push(startPod(spec, `${spec.deployment}-${replica}`, await freePort()));
  for (const pod of pods) {
    const spec = pod.name.startsWith(gateway.deployment) ? gateway : worker;
    await waitForProbe(pod, spec.liveness, 90_000);
    await waitForProbe(pod, spec.readiness, 90_000);
  }
  const gateways = pods.filter((pod) => pod.name.startsWith(gateway.deployment));
  haproxy = await startHaproxy({
    backends: gateways.map((pod) => ({ port: pod.port })),
    healthCheck: {
      path: gateway.readiness.path,
      ...(gateway.readiness.host !== undefined && { host: gateway.readiness.host }),
    },
  });
  const deadline = Date.now() + 20_000;
  while (!(await haproxy.servers()).every((server) => server.status === 'UP')) {
    if (Date.now() > deadline) throw new Error(`haproxy health checks never passed:\n${haproxy.output()}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}, 180_000);

afterAll(async () => {
  await Promise.all(clients.splice(0).map((client) => client.close().catch(() => {})));
  await haproxy?.stop();
  await Promise.all(pods.map((pod) => pod.stop()));
  await redis?.stop();
}, 60_000);

async function connect(): Promise<Client> {
  const client = new Client({ name: 'chart-processes', version: '1.0.0' }, { capabilities: {} });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${haproxy?.origin}/mcp`)));
  clients.push(client);
  return client;
}

async function createTask(client: Client, name: string, args: Record<string, unknown>): Promise<string> {
  const created = await client.request(
    { method: 'tools/call', params: { name, arguments: args, task: {} } },
    CreateTaskResultSchema,
  );
  return created.task.taskId;
}

/** Sessions HAProxy sent to each gateway so far. */
async function sessions(): Promise<number[]> {
  return (await (haproxy as Haproxy).servers()).map((server) => server.sessions);
}

describe('the chart as processes: 2 gateways and 2 workers behind HAProxy', () => {
  it('starts every replica the chart renders, each answering its rendered probes, all UP in HAProxy', async () => {
    expect(pods.map((pod) => pod.name)).toEqual([
      'pods-taskgate-worker-0',
      'pods-taskgate-worker-1',
      'pods-taskgate-gateway-0',
      'pods-taskgate-gateway-1',
    ]);
    expect(gateway.command).toEqual(['taskgate', 'gateway']);
    expect(worker.command).toEqual(['taskgate', 'worker']);
    expect(gateway.readiness).toEqual({ path: '/readyz', port: 3000, host: 'localhost' });
    expect(worker.readiness).toEqual({ path: '/readyz', port: 9464 });
    expect(gateway.portVariable).toBe('PORT');
    expect(worker.portVariable).toBe('TASKGATE_METRICS_PORT');
    expect((await (haproxy as Haproxy).servers()).map((server) => server.status)).toEqual(['UP', 'UP']);
  });

  it('creates a task on one pod and gets its result on the other (tasks/result through round robin)', async () => {
    const client = await connect();
    const before = await sessions();
    const taskId = await createTask(client, 'slow_compute', { seconds: 0.3 });
    const result = await client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema);
    expect(result).toEqual({
      content: [{ type: 'text', text: 'Computed after 0.3 second(s).' }],
      _meta: { [RELATED_TASK_META_KEY]: { taskId } },
    });
    const after = await sessions();
    expect(after.map((count, index) => count - (before[index] ?? 0)).every((delta) => delta > 0)).toBe(true);
  });

  it('cancels a running task from whichever pod gets the request', async () => {
    const client = await connect();
    const taskId = await createTask(client, 'slow_compute', { seconds: 30 });
    const cancelled = await client.experimental.tasks.cancelTask(taskId);
    expect(cancelled).toMatchObject({ taskId, status: 'cancelled' });
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
    expect((await client.experimental.tasks.getTask(taskId)).status).toBe('cancelled');
  });

  it('lists every task of the session across pages, cursors redeemed on either pod', async () => {
    const client = await connect();
    const ids = new Set<string>();
    for (let i = 0; i < 5; i++) ids.add(await createTask(client, 'slow_compute', { seconds: 0 }));
    const pages = await taskPages(client);
    for (const page of pages) expect(page.length).toBeLessThanOrEqual(2);
    expect(pages.length).toBe(3);
    expect(pages.flat().sort()).toEqual([...ids].sort());
  });

  it('passes the MCP conformance suites through HAProxy: 0.1.16, and 0.2.0-alpha.12 on 2026-07-28 with the tasks extension (expected failures: test/conformance/expected-failures*.yml)', async () => {
    const args = ['--conditions=taskgate-source', '--import', 'tsx', 'test/conformance/run.ts'];
    const child = spawn(
      process.execPath,
      [...args, '--leg', '0.1.16', '--leg', '2026-07-28', '--leg', 'tasks', '--url', `${haproxy?.origin}/mcp`],
      {
        cwd: repoRoot,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    child.stderr?.on('data', (chunk: Buffer) => {
      output += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.once('exit', (exit) => resolve(exit)));
    expect(code, output).toBe(0);
    console.log(
      output
        .split('\n')
        .filter((line) => /^(✓|✗|Total|Passed:|conformance: leg .* exited)/.test(line))
        .join('\n'),
    );
  }, 600_000);
});
