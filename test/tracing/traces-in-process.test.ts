import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { configureTracing } from '@taskgate/core';
import { createGateway } from '@taskgate/gateway';
import { postHeaders, raw, useRedis, waitFor } from '@taskgate/test-harness';
import { createWorker } from '@taskgate/worker';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTask, initialize, newTraceparent, resultAnswering } from './fixtures/client.js';
import { prompts, tools } from './fixtures/tools.js';

// A gateway and a worker in this process, with the SDK's in-memory exporter registered as the global
// tracer provider; real Redis, real BullMQ, real HTTP.

const exporter = new InMemorySpanExporter();
const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
provider.register();

const SECRET = 'argument-secret-4f1c9e';
const redis = useRedis();
let stop: (() => Promise<void>) | undefined;

afterEach(async () => {
  await stop?.();
  stop = undefined;
  exporter.reset();
});
afterAll(async () => {
  await provider.shutdown();
});

async function start(): Promise<string> {
  const gateway = createGateway({
    redis: redis.connect(),
    keyPrefix: redis.prefix,
    cursorSecret: 'trace-test-cursor-secret-0123456789',
  });
  const { url } = await gateway.listen(0, '127.0.0.1');
  const worker = createWorker({ redis: redis.url, prefix: redis.prefix, tools, prompts, statusCheckMs: 500 });
  await worker.ready;
  stop = async () => {
    await worker.close({ deadlineMs: 500 });
    await gateway.close();
  };
  return url;
}

/** A gateway and worker, a session on it, and a `flaky` task (failing `failures` times) under a client's traceparent. */
async function startFlaky(failures: number): Promise<{
  url: string;
  client: ReturnType<typeof newTraceparent>;
  sessionId: string;
  taskId: string;
}> {
  const url = await start();
  const client = newTraceparent();
  const sessionId = await initialize(url);
  const args = { secret: SECRET, failures };
  const taskId = await createTask(url, sessionId, 'flaky', args, { traceparent: client.traceparent });
  return { url, client, sessionId, taskId };
}

const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
const named = (name: string): ReadableSpan[] => spans().filter((span) => span.name === name);
const parentOf = (span: ReadableSpan): string | undefined => span.parentSpanContext?.spanId;
const only = (name: string): ReadableSpan => {
  const found = named(name);
  expect(
    found.map((span) => span.name),
    `spans named ${name}`,
  ).toEqual([name]);
  return found[0] as ReadableSpan;
};

describe('traces with the in-memory exporter (gateway and worker in one process)', () => {
  beforeAll(() => {
    expect(provider.getTracer('probe').startSpan('probe').isRecording()).toBe(true);
  });

  it("follows one trace from the client's traceparent through the request and enqueue spans to the worker's execution and its elicitation", async () => {
    const url = await start();
    const client = newTraceparent();
    const sessionId = await initialize(url);
    const taskId = await createTask(url, sessionId, 'greet', { secret: SECRET }, { traceparent: client.traceparent });
    expect(await resultAnswering(url, sessionId, taskId, 'Ada')).toBe('Hello, Ada!');
    await waitFor(() => named('process tool.greet').length === 1, 'the worker span', 10_000);

    const request = only('tools/call greet');
    expect(request.kind).toBe(SpanKind.SERVER);
    expect(request.spanContext().traceId).toBe(client.traceId);
    expect(parentOf(request)).toBe(client.spanId);
    expect(request.attributes).toMatchObject({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'tools/call',
      'mcp.method': 'tools/call',
      'mcp.method.name': 'tools/call',
      'jsonrpc.request.id': '1',
      'mcp.tool': 'greet',
      'gen_ai.tool.name': 'greet',
      'mcp.task.id': taskId,
      'mcp.task.status': 'working',
      'http.response.status_code': 200,
    });

    const send = only('send tool.greet');
    expect(send.kind).toBe(SpanKind.PRODUCER);
    expect(parentOf(send)).toBe(request.spanContext().spanId);
    expect(send.attributes).toMatchObject({ 'messaging.destination.name': 'tool.greet', 'mcp.task.id': taskId });

    const process = only('process tool.greet');
    expect(process.kind).toBe(SpanKind.CONSUMER);
    expect(process.spanContext().traceId).toBe(client.traceId);
    expect(parentOf(process)).toBe(send.spanContext().spanId);
    expect(process.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'mcp.task.id': taskId,
      'mcp.tool': 'greet',
      'taskgate.attempt': 1,
      'mcp.task.status': 'completed',
    });

    const execute = only('execute_tool greet');
    expect(parentOf(execute)).toBe(process.spanContext().spanId);
    const elicitation = only('elicitation/create');
    expect(elicitation.kind).toBe(SpanKind.CLIENT);
    expect(elicitation.spanContext().traceId).toBe(client.traceId);
    expect(parentOf(elicitation)).toBe(execute.spanContext().spanId);
    expect(elicitation.attributes['jsonrpc.request.id']).toMatch(/^in-/);
    expect(elicitation.attributes['mcp.task.id']).toBe(taskId);

    // The tasks/result request and the client's answer are spans of their own (new roots: no traceparent).
    expect(only('tasks/result').spanContext().traceId).not.toBe(client.traceId);
    expect(only('response').attributes['jsonrpc.request.id']).toBe(elicitation.attributes['jsonrpc.request.id']);
    const everything = JSON.stringify(spans().map((span) => [span.name, span.attributes]));
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(sessionId);
  });

  it('records every attempt of a retried task as a span of the same trace', async () => {
    const { url, client, sessionId, taskId } = await startFlaky(2);
    expect(await resultAnswering(url, sessionId, taskId, 'unused')).toBe('succeeded on attempt 3');
    await waitFor(() => named('process tool.flaky').length === 3, 'three attempt spans', 10_000);

    const send = only('send tool.flaky');
    const attempts = named('process tool.flaky').sort(
      (a, b) => Number(a.attributes['taskgate.attempt']) - Number(b.attributes['taskgate.attempt']),
    );
    expect(attempts.map((span) => span.attributes['taskgate.attempt'])).toEqual([1, 2, 3]);
    for (const span of attempts) {
      expect(span.spanContext().traceId).toBe(client.traceId);
      expect(parentOf(span)).toBe(send.spanContext().spanId);
    }
    // SpanStatusCode: 2 = ERROR, 0 = UNSET.
    expect(attempts.map((span) => span.status.code)).toEqual([2, 2, 0]);
    expect(attempts[2]?.attributes['mcp.task.status']).toBe('completed');
    expect(attempts[0]?.attributes['mcp.task.status']).toBeUndefined();
    expect(JSON.stringify(spans().map((span) => [span.name, span.attributes, span.status]))).not.toContain(SECRET);
  });

  it("runs a read (prompts/get) in the request's trace", async () => {
    const url = await start();
    const client = newTraceparent();
    const sessionId = await initialize(url);
    const response = await raw(url, {
      headers: postHeaders(sessionId, { traceparent: client.traceparent }),
      body: JSON.stringify({
        jsonrpc: '2.0',
        id: 5,
        method: 'prompts/get',
        params: { name: 'welcome', arguments: { who: SECRET } },
      }),
    });
    expect(response.status, response.text).toBe(200);
    await waitFor(() => spans().some((span) => span.name.startsWith('process reads.')), 'the read span', 10_000);
    const request = only('prompts/get welcome');
    expect(request.spanContext().traceId).toBe(client.traceId);
    expect(request.attributes['gen_ai.prompt.name']).toBe('welcome');
    const read = spans().find((span) => span.name.startsWith('process reads.')) as ReadableSpan;
    expect(read.kind).toBe(SpanKind.CONSUMER);
    expect(read.spanContext().traceId).toBe(client.traceId);
    expect(read.attributes['mcp.method.name']).toBe('prompts/get');
    expect(JSON.stringify(spans().map((span) => span.attributes))).not.toContain(SECRET);
  });

  it("records a cancellation on the cancel request's span and on the execution's", async () => {
    const url = await start();
    const sessionId = await initialize(url);
    const taskId = await createTask(url, sessionId, 'greet', { secret: SECRET });
    // The tool waits for an answer nobody gives: cancel it while it waits.
    const status = async (): Promise<unknown> => {
      const got = await raw(url, {
        headers: postHeaders(sessionId),
        body: JSON.stringify({ jsonrpc: '2.0', id: 8, method: 'tasks/get', params: { taskId } }),
      });
      return (got.json() as { result?: { status?: unknown } }).result?.status;
    };
    await waitFor(async () => (await status()) === 'input_required', 'the elicitation to wait', 10_000);
    const cancelled = await raw(url, {
      headers: postHeaders(sessionId),
      body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tasks/cancel', params: { taskId } }),
    });
    expect(cancelled.status, cancelled.text).toBe(200);
    await waitFor(() => named('process tool.greet').length === 1, 'the worker span', 10_000);
    expect(only('tasks/cancel').attributes).toMatchObject({ 'mcp.task.id': taskId, 'mcp.task.status': 'cancelled' });
    expect(only('process tool.greet').attributes).toMatchObject({
      'mcp.task.status': 'cancelled',
      'taskgate.discarded': 'cancelled',
    });
    expect(only('elicitation/create').status.code).toBe(2);
  });

  it('answers a request without a traceparent under a new root span', async () => {
    const url = await start();
    const sessionId = await initialize(url);
    const taskId = await createTask(url, sessionId, 'flaky', { secret: SECRET, failures: 0 });
    await resultAnswering(url, sessionId, taskId, 'unused');
    await waitFor(() => named('process tool.flaky').length === 1, 'the worker span', 10_000);
    const request = only('tools/call flaky');
    expect(parentOf(request)).toBeUndefined();
    expect(only('process tool.flaky').spanContext().traceId).toBe(request.spanContext().traceId);
  });
});

describe('Redis spans (TASKGATE_TRACE_REDIS)', () => {
  afterEach(() => {
    configureTracing({ redisSpans: false });
  });

  it("adds a span per Lua script and BullMQ's own spans to the task's trace, naming scripts only", async () => {
    configureTracing({ redisSpans: true });
    const { url, client, sessionId, taskId } = await startFlaky(0);
    await resultAnswering(url, sessionId, taskId, 'unused');
    await waitFor(() => named('EVALSHA finishTask').length > 0, 'the finish script span', 10_000);
    await waitFor(() => named('process tool.flaky').length === 2, "taskgate's and BullMQ's process spans", 10_000);

    const request = only('tools/call flaky');
    const create = named('EVALSHA createTask').find((span) => parentOf(span) === request.spanContext().spanId);
    expect(create?.kind).toBe(SpanKind.CLIENT);
    expect(create?.attributes).toEqual({
      'db.system.name': 'redis',
      'db.operation.name': 'EVALSHA',
      'db.stored_procedure.name': 'createTask',
    });
    // BullMQ's add span is a child of taskgate's send span; its process span is the parent of taskgate's.
    const send = only('send tool.flaky');
    const add = named('add tool.flaky.flaky').find((span) => parentOf(span) === send.spanContext().spanId);
    expect(add?.spanContext().traceId).toBe(client.traceId);
    const pair = named('process tool.flaky');
    const inner = pair.find((span) => pair.some((other) => parentOf(span) === other.spanContext().spanId));
    const outer = pair.find((span) => span !== inner);
    expect(inner, 'a process span inside the other').toBeDefined();
    expect(inner?.attributes['mcp.task.id']).toBe(taskId);
    expect(outer?.spanContext().traceId).toBe(client.traceId);
    // An execution writes its start before the tool runs, and its finish after: both in the same trace.
    for (const script of ['EVALSHA startTask', 'EVALSHA finishTask']) {
      const span = named(script).find((candidate) => parentOf(candidate) === inner?.spanContext().spanId);
      expect(span?.spanContext().traceId, script).toBe(client.traceId);
    }
    expect(JSON.stringify(spans().map((span) => span.attributes))).not.toContain(SECRET);
  });
});
