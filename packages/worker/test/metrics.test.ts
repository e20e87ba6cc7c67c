import { freePort, scrape, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { processTools } from './fixtures/tools.js';
import { until } from './support/gateway.js';
import { useWorkers } from './support/in-process.js';

describe('worker metrics and health endpoint', () => {
  const redis = useRedis();
  const { worker: startWorker, gateway: startGateway } = useWorkers(redis);

  it('serves /metrics, /healthz and /readyz on its own port: in-flight tasks, finished tasks, queue depth, draining', async () => {
    const port = await freePort();
    const worker = await startWorker(processTools, { metricsPort: port });
    expect(worker.metricsPort).toBe(port);
    const base = `http://127.0.0.1:${port}`;
    const gateway = startGateway();
    expect(await (await fetch(`${base}/healthz`)).json()).toEqual({ status: 'ok' });
    expect((await fetch(`${base}/readyz`)).status).toBe(200);
    expect((await fetch(`${base}/nope`)).status).toBe(404);

    const quick = await gateway.call('sleeper', { ms: 0 }, { principal: 'alice' });
    await gateway.waitForEnd(quick);
    // Long enough to be scraped after its start is recorded and before it ends.
    const slow = await gateway.call('sleeper', { ms: 3000 });
    await gateway.waitFor(slow, (task) => task.attempt === 1);
    await until(
      async () =>
        (await scrape(`${base}/metrics`)).value('taskgate_tasks_in_flight', { tool: 'sleeper' }) === 1
          ? true
          : undefined,
      5000,
      'one execution in flight',
    );
    const during = await scrape(`${base}/metrics`);
    expect(during.value('taskgate_tasks_finished_total', { tool: 'sleeper', status: 'completed' })).toBe(1);
    expect(during.value('taskgate_task_duration_seconds_count', { tool: 'sleeper', status: 'completed' })).toBe(1);
    expect(during.value('taskgate_task_queue_wait_seconds_count', { tool: 'sleeper' })).toBe(2);
    expect(during.value('taskgate_queue_jobs', { queue: 'tool.sleeper', state: 'active' })).toBe(1);
    expect(during.value('taskgate_job_executions_total', { tool: 'sleeper', outcome: 'done' })).toBe(1);
    expect(during.value('taskgate_redis_connected', { connection: 'subscriber' })).toBe(1);

    // Draining: not ready any more while the running task finishes; the endpoint goes away with the worker.
    const closing = worker.close({ deadlineMs: 5000 });
    await until(async () => ((await fetch(`${base}/readyz`)).status === 503 ? true : undefined), 2000, 'not ready');
    expect((await scrape(`${base}/metrics`)).value('taskgate_worker_draining')).toBe(1);
    await closing;
    expect((await gateway.read(slow))?.status).toBe('completed');
    await expect(fetch(`${base}/healthz`)).rejects.toThrow();
  });
});
