import { CallToolResultSchema, CreateTaskResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { connectClient, postHeaders, rawCall, rawInitialize, scrape, useRedis, waitFor } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { useStacks } from './support/stack.js';

const metricsUrl = (mcpUrl: string): string => new URL('/metrics', mcpUrl).href;

describe('gateway metrics', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('counts tasks by tool and status, JSON-RPC requests and errors, HTTP requests, waiters and streams', async () => {
    const stack = await start();
    const worker = stack.worker;
    if (worker === undefined) throw new Error('the stack has a worker');
    const { client } = await connectClient(stack.url);
    const before = await scrape(metricsUrl(stack.url));
    expect(before.value('taskgate_tasks_created_total', { tool: 'sleep' })).toBe(0);

    const done = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 }, task: {} } },
      CreateTaskResultSchema,
    );
    await client.experimental.tasks.getTaskResult(done.task.taskId, CallToolResultSchema);
    const running = await client.request(
      { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 10_000 }, task: {} } },
      CreateTaskResultSchema,
    );
    const { taskId } = running.task;
    // A blocked tasks/result: one waiter and one open result stream while it waits.
    const controller = new AbortController();
    const sessionId = await rawInitialize(stack.url);
    const waiting = fetch(stack.url, {
      method: 'POST',
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tasks/result', params: { taskId } }),
      signal: controller.signal,
    });
    await waitFor(() => worker.active === 1, 'the task to run');
    // The raw session is not the task's owner, so its tasks/result fails at once; use the SDK client's.
    expect((await (await waiting).json()) as unknown).toMatchObject({ error: { code: -32602 } });
    const blocked = client.experimental.tasks.getTaskResult(taskId, CallToolResultSchema).catch((e: unknown) => e);
    await waitFor(async () => (await scrape(metricsUrl(stack.url))).value('taskgate_task_waiters') === 1, 'a waiter');
    // Its stream opens once the wait in the process (resultStreamAfterMs, 1 s) ran out.
    const streamOpen = async () =>
      (await scrape(metricsUrl(stack.url))).value('taskgate_sse_streams_open', { role: 'result' }) === 1;
    await waitFor(streamOpen, 'the result stream');
    const during = await scrape(metricsUrl(stack.url));
    expect(during.value('taskgate_task_waiters')).toBe(1);
    const workerDuring = await worker.metrics.getSingleMetricAsString('taskgate_tasks_in_flight');
    expect(workerDuring).toContain('taskgate_tasks_in_flight{tool="sleep"} 1');

    await client.experimental.tasks.cancelTask(taskId);
    await blocked;
    await rawCall(stack.url, sessionId, 'tasks/get', { taskId: 'no-such-task' });
    await rawCall(stack.url, sessionId, 'no/such/method');
    controller.abort();

    const after = await scrape(metricsUrl(stack.url));
    expect(after.value('taskgate_tasks_created_total', { tool: 'sleep', kind: 'task' })).toBe(2);
    expect(after.value('taskgate_tasks_finished_total', { tool: 'sleep', status: 'cancelled' })).toBe(1);
    expect(after.value('taskgate_task_duration_seconds_count', { tool: 'sleep', status: 'cancelled' })).toBe(1);
    expect(after.value('taskgate_rpc_requests_total', { method: 'tools/call' })).toBe(2);
    expect(after.value('taskgate_rpc_errors_total', { method: 'tasks/get', code: '-32602' })).toBe(1);
    expect(after.value('taskgate_rpc_errors_total', { method: 'tasks/result', code: '-32603' })).toBe(0);
    expect(after.value('taskgate_rpc_errors_total', { method: 'other', code: '-32601' })).toBe(1);
    expect(after.value('taskgate_task_lookup_failures_total', { method: 'tasks/get' })).toBe(1);
    expect(after.value('taskgate_task_lookup_failures_total', { method: 'tasks/result' })).toBe(1);
    expect(after.value('taskgate_sessions_created_total')).toBe(2);
    expect(
      after.value('taskgate_http_requests_total', { method: 'POST', route: 'mcp', status: '200' }),
    ).toBeGreaterThan(5);
    expect(after.value('taskgate_task_waiters')).toBe(0);
    expect(after.value('taskgate_sse_streams_open', { role: 'result' })).toBe(0);
    expect(after.value('taskgate_redis_connected', { connection: 'commands' })).toBe(1);
    expect(after.value('taskgate_redis_connected', { connection: 'subscriber' })).toBe(1);
    expect(after.value('taskgate_redis_errors_total', { connection: 'commands' })).toBe(0);

    // Completed and failed tasks are counted where they finish: on the worker.
    const workerText = await worker.metrics.metrics();
    expect(workerText).toContain('taskgate_tasks_finished_total{tool="sleep",kind="task",status="completed"} 1');
    expect(workerText).toContain('taskgate_task_queue_wait_seconds_count{tool="sleep",kind="task"} 2');
    expect(workerText).toContain('taskgate_job_executions_total{tool="sleep",outcome="done"} 2');

    // Bounded labels: tools from the catalog, methods we answer; no task ids or session ids anywhere.
    const text = await (await fetch(metricsUrl(stack.url))).text();
    for (const secret of [taskId, done.task.taskId, sessionId]) expect(text).not.toContain(secret);
    const tools = new Set(
      after.samples.flatMap((sample) => (sample.labels.tool === undefined ? [] : [sample.labels.tool])),
    );
    expect([...tools]).toEqual(['sleep']);
    // An unknown method is counted as `other`, never under the name the caller sent.
    expect(text).not.toContain('no/such/method');
  });

  it('reports BullMQ queue depth by state at scrape time', async () => {
    const stack = await start();
    await stack.worker?.close({ deadlineMs: 100 });
    const { client } = await connectClient(stack.url);
    for (let i = 0; i < 3; i++) {
      await client.request(
        { method: 'tools/call', params: { name: 'sleep', arguments: { ms: 0 }, task: {} } },
        CreateTaskResultSchema,
      );
    }
    const metrics = await scrape(metricsUrl(stack.url));
    expect(metrics.value('taskgate_queue_jobs', { queue: 'tool.sleep', state: 'waiting' })).toBe(3);
    expect(metrics.value('taskgate_queue_jobs', { queue: 'tool.sleep', state: 'active' })).toBe(0);
    expect(metrics.types.get('taskgate_queue_jobs')).toBe('gauge');
  });
});
