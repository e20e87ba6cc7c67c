import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import { Keys } from '@taskgate/core';
import {
  type ForkedProcess,
  forkNode,
  freePort,
  type RedisServer,
  startRedis,
  uniquePrefix,
  waitFor,
} from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { forkGateway, waitForOutput } from '../gateway/fixtures/processes.js';
import { createTask, initialize, newTraceparent, resultAnswering } from './fixtures/client.js';

// The gateway and the worker as separate processes of the CLI, exporting with OTLP/HTTP JSON to a receiver
// this test starts on 127.0.0.1.

const root = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = fileURLToPath(new URL('./fixtures/tools.ts', import.meta.url));
const SECRET = 'argument-secret-7b2d90';
const TOKEN = 'bearer-token-secret-e81a5c';
const PRINCIPAL = 'principal-in-clear-3c7d';

type AnyValue = { stringValue?: string; intValue?: string | number; boolValue?: boolean; doubleValue?: number };
type KeyValue = { key: string; value: AnyValue };
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: KeyValue[];
}
interface ExportRequest {
  resourceSpans?: { resource?: { attributes?: KeyValue[] }; scopeSpans?: { spans?: OtlpSpan[] }[] }[];
}
interface ReceivedSpan {
  readonly service: string;
  readonly span: OtlpSpan;
  readonly attributes: Record<string, unknown>;
}

/** An OTLP/HTTP receiver: keeps every body posted to /v1/traces. */
async function startReceiver(): Promise<{ server: Server; endpoint: string; bodies: string[]; paths: string[] }> {
  const bodies: string[] = [];
  const paths: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => {
      paths.push(`${req.method} ${req.url} ${req.headers['content-type']}`);
      bodies.push(body);
      res.writeHead(200, { 'Content-Type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as { port: number };
  return { server, endpoint: `http://127.0.0.1:${address.port}`, bodies, paths };
}

const plainValue = (value: AnyValue): unknown =>
  value.stringValue ?? (value.intValue !== undefined ? Number(value.intValue) : (value.boolValue ?? value.doubleValue));
const attributesOf = (list: KeyValue[] = []): Record<string, unknown> =>
  Object.fromEntries(list.map(({ key, value }) => [key, plainValue(value)]));

function spansOf(bodies: readonly string[]): ReceivedSpan[] {
  return bodies.flatMap((body) =>
    ((JSON.parse(body) as ExportRequest).resourceSpans ?? []).flatMap((resource) => {
      const service = String(attributesOf(resource.resource?.attributes)['service.name']);
      return (resource.scopeSpans ?? []).flatMap((scope) =>
        (scope.spans ?? []).map((span) => ({ service, span, attributes: attributesOf(span.attributes) })),
      );
    }),
  );
}

const KINDS = ['UNSPECIFIED', 'INTERNAL', 'SERVER', 'CLIENT', 'PRODUCER', 'CONSUMER'];
const SHOWN = ['mcp.method', 'mcp.tool', 'mcp.task.id', 'mcp.task.status', 'taskgate.attempt', 'jsonrpc.request.id'];

/** The span tree of one trace as text (the trace example of docs/operate/traces.md is one such run). */
function renderTree(spans: readonly ReceivedSpan[]): string {
  const ids = new Set(spans.map((received) => received.span.spanId));
  const children = (parent: string | undefined) =>
    spans
      .filter((received) =>
        parent === undefined ? !ids.has(received.span.parentSpanId ?? '') : received.span.parentSpanId === parent,
      )
      .sort((a, b) => Number(BigInt(startOf(a)) - BigInt(startOf(b))));
  const lines: string[] = [];
  const walk = (received: ReceivedSpan, depth: number): void => {
    const { span, service, attributes } = received;
    const ms =
      Number(BigInt(String((span as { endTimeUnixNano?: string }).endTimeUnixNano)) - BigInt(startOf(received))) / 1e6;
    const shown = SHOWN.filter((key) => attributes[key] !== undefined).map(
      (key) => `${key}=${String(attributes[key])}`,
    );
    lines.push(
      `${'  '.repeat(depth)}${span.name}  [${service} ${KINDS[span.kind]} ${ms.toFixed(1)} ms]  ${shown.join(' ')}`.trimEnd(),
    );
    for (const child of children(span.spanId)) walk(child, depth + 1);
  };
  for (const rootSpan of children(undefined)) walk(rootSpan, 0);
  return `${lines.join('\n')}\n`;
}
const startOf = (received: ReceivedSpan): string =>
  String((received.span as { startTimeUnixNano?: string }).startTimeUnixNano);

describe('traces exported with OTLP/HTTP JSON by separate gateway and worker processes', () => {
  let redis: RedisServer;
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  let admin: Redis;
  const procs: ForkedProcess[] = [];

  beforeAll(async () => {
    redis = await startRedis();
    admin = new Redis(redis.url);
  });
  afterEach(async () => {
    await Promise.all(procs.splice(0).map((proc) => proc.stop('SIGTERM', 5000)));
    await new Promise((resolve) => receiver?.server.close(resolve));
  });
  afterAll(async () => {
    admin?.disconnect();
    await redis?.stop();
  });

  /** Starts a worker with the fixture tools and a gateway, both with `otel` on top of the common settings. */
  async function startProcesses(otel: Record<string, string>) {
    receiver = await startReceiver();
    const prefix = uniquePrefix('otlp');
    const env = {
      REDIS_URL: redis.url,
      TASKGATE_KEY_PREFIX: prefix,
      TASKGATE_CURSOR_SECRET: 'otlp-test-cursor-secret-0123456789',
      TASKGATE_AUTH: 'tokens',
      TASKGATE_TOKENS: `${TOKEN}=${PRINCIPAL}`,
      TASKGATE_METRICS_PORT: String(await freePort()),
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint,
      ...otel,
    };
    const worker = forkNode(`${root}packages/cli/src/run.ts`, ['worker', '--tools', TOOLS], env);
    procs.push(worker);
    await waitForOutput(worker, /worker ready/, 60_000);
    const gateway = await forkGateway(env);
    procs.push(gateway.proc);
    return { url: gateway.url, keys: new Keys(prefix), worker, gateway: gateway.proc };
  }

  /** The job data of a task's job, as BullMQ keeps it. */
  async function jobData(keys: Keys, tool: string, taskId: string): Promise<Record<string, unknown>> {
    const queue = `tool.${tool}`;
    const data = await admin.hget(`${keys.bullPrefix(queue)}:${queue}:${taskId}`, 'data');
    return JSON.parse(data as string) as Record<string, unknown>;
  }

  it('exports one trace from the HTTP request to the worker span and its elicitation, with no argument, token or principal in it', async () => {
    const { url, keys } = await startProcesses({});
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const client = newTraceparent();
    const sessionId = await initialize(url, auth);
    const taskId = await createTask(
      url,
      sessionId,
      'greet',
      { secret: SECRET },
      { ...auth, traceparent: client.traceparent },
    );
    const data = await jobData(keys, 'greet', taskId);
    expect(Object.keys(data.trace as object)).toEqual(['traceparent']);
    expect((data.trace as { traceparent: string }).traceparent).toMatch(
      new RegExp(`^00-${client.traceId}-[0-9a-f]{16}-01$`),
    );
    expect(await resultAnswering(url, sessionId, taskId, 'Ada', auth)).toBe('Hello, Ada!');

    await waitFor(
      () => spansOf(receiver.bodies).some((received) => received.span.name === 'process tool.greet'),
      'the worker span at the receiver',
      15_000,
    );
    // Stopping the processes exports what they still buffer.
    await Promise.all(procs.splice(0).map((proc) => proc.stop('SIGTERM', 10_000)));
    expect(receiver.paths.every((path) => path === 'POST /v1/traces application/json')).toBe(true);

    const spans = spansOf(receiver.bodies);
    const inTrace = spans.filter((received) => received.span.traceId === client.traceId);
    const find = (name: string): ReceivedSpan => {
      const found = inTrace.filter((received) => received.span.name === name);
      expect(found.map((received) => received.span.name)).toEqual([name]);
      return found[0] as ReceivedSpan;
    };
    const request = find('tools/call greet');
    expect(request.service).toBe('taskgate-gateway');
    expect(request.span.parentSpanId).toBe(client.spanId);
    expect(request.attributes).toMatchObject({
      'rpc.system': 'jsonrpc',
      'rpc.method': 'tools/call',
      'mcp.method': 'tools/call',
      'mcp.tool': 'greet',
      'mcp.task.id': taskId,
      'mcp.task.status': 'working',
      'taskgate.owner': Keys.ownerId(PRINCIPAL),
    });
    const send = find('send tool.greet');
    expect(send.span.parentSpanId).toBe(request.span.spanId);
    const process = find('process tool.greet');
    expect(process.service).toBe('taskgate-worker');
    expect(process.span.parentSpanId).toBe(send.span.spanId);
    expect(process.attributes).toMatchObject({
      'messaging.system': 'bullmq',
      'messaging.destination.name': 'tool.greet',
      'mcp.task.id': taskId,
      'mcp.task.status': 'completed',
      'taskgate.attempt': 1,
    });
    const execute = find('execute_tool greet');
    expect(execute.span.parentSpanId).toBe(process.span.spanId);
    const elicitation = find('elicitation/create');
    expect(elicitation.span.parentSpanId).toBe(execute.span.spanId);
    expect(elicitation.attributes['mcp.task.id']).toBe(taskId);

    // The span tree of this run, for people (test-results/ is not committed).
    const output = `${root}test-results/traces`;
    mkdirSync(output, { recursive: true });
    writeFileSync(`${output}/greet-task.txt`, `traceparent ${client.traceparent}\n${renderTree(inTrace)}`);

    const everything = receiver.bodies.join('\n');
    for (const secret of [SECRET, TOKEN, PRINCIPAL, sessionId]) expect(everything).not.toContain(secret);
  });

  it('exports nothing and puts no trace context in the job while tracing is off, even for a request with a traceparent', async () => {
    // An endpoint is set, but OTEL_SDK_DISABLED wins: no SDK starts.
    const { url, keys } = await startProcesses({ OTEL_SDK_DISABLED: 'true' });
    const auth = { Authorization: `Bearer ${TOKEN}` };
    const sessionId = await initialize(url, auth);
    const headers = { ...auth, traceparent: newTraceparent().traceparent };
    const taskId = await createTask(url, sessionId, 'greet', { secret: SECRET }, headers);
    expect(Object.keys(await jobData(keys, 'greet', taskId))).not.toContain('trace');
    expect(await resultAnswering(url, sessionId, taskId, 'Ada', auth)).toBe('Hello, Ada!');
    await Promise.all(procs.splice(0).map((proc) => proc.stop('SIGTERM', 10_000)));
    expect(receiver.bodies).toEqual([]);
  });
});
