import { celeryQueueList } from '@taskgate/core';
import { describe, expect, it } from 'vitest';
import { celeryArguments, revokeMessage, taskMessage, taskParts } from '../src/celery/celery-message.js';
import { celeryStep } from '../src/celery/celery-states.js';
import { BridgeConfigError, isCeleryTool, loadBridgeConfig, parseBridgeConfig } from '../src/config.js';

const yaml = `
connections:
  py: { url: redis://127.0.0.1:6380/0 }
tools:
  - name: render_pdf
    description: Renders a PDF.
    taskSupport: required
    inputSchema: { type: object, properties: { path: { type: string }, dpi: { type: integer } }, required: [path] }
    celery:
      task: reports.render_pdf
      connection: py
      resultBackend: py
      queue: celery
      args: [$.path]
      kwargs: { dpi: $.dpi }
      options: { priority: 5, timeLimitS: 600, softTimeLimitS: 540, expiresMs: 3600000 }
      cancel: revoke
    result: auto
`;

function problems(input: unknown): readonly string[] {
  try {
    parseBridgeConfig(input);
  } catch (error) {
    if (error instanceof BridgeConfigError) return error.problems;
    throw error;
  }
  throw new Error('the config was accepted');
}

const celeryOf = (text: string) => {
  const tool = loadBridgeConfig(text).tools[0];
  if (tool === undefined || !isCeleryTool(tool)) throw new Error('no Celery tool');
  return tool;
};

describe('bridge config: celery tools', () => {
  it('reads the documented YAML, and its defaults', () => {
    const tool = celeryOf(yaml);
    expect(tool.celery).toMatchObject({ task: 'reports.render_pdf', queue: 'celery', cancel: 'revoke' });
    const minimal = celeryOf(yaml.replace(/ {6}resultBackend[\s\S]*cancel: revoke\n/, ''));
    expect(minimal.celery).toEqual({
      task: 'reports.render_pdf',
      connection: 'py',
      queue: 'celery',
      options: {},
      cancel: 'revoke',
    });
  });

  it('names the path of every problem', () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as { celery: Record<string, unknown> };
    const celery = (extra: Record<string, unknown>) => ({
      ...config,
      tools: [{ ...tool, celery: { ...tool.celery, ...extra } }],
    });
    expect(problems(celery({ connection: 'nope', resultBackend: 'gone' }))).toEqual([
      'tools[0].celery.connection: unknown connection "nope"',
      'tools[0].celery.resultBackend: unknown connection "gone"',
    ]);
    expect(problems(celery({ options: { priority: 12, retries: 1 }, cancel: 'kill', task: '' }))).toEqual([
      'tools[0].celery.task: must be the Celery task name',
      'tools[0].celery.options.priority: Too big: expected number to be <=9',
      'tools[0].celery.options: Unrecognized key: "retries"',
      'tools[0].celery.cancel: Invalid option: expected one of "revoke"|"terminate"',
    ]);
    expect(problems(celery({ options: { timeLimitS: 10, softTimeLimitS: 20 } }))).toEqual([
      'tools[0].celery.options.softTimeLimitS: must not exceed timeLimitS (10)',
    ]);
    expect(problems({ ...config, tools: [{ ...tool, job: { name: 'x' } }] })).toEqual([
      'tools[0]: Unrecognized key: "job"',
    ]);
  });

  it('takes an AMQP broker with a Redis or rpc result backend, and names what does not fit', () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as { celery: Record<string, unknown> };
    const amqp = (extra: Record<string, unknown>) => ({
      connections: { ...config.connections, rabbit: { url: 'amqp://guest:guest@127.0.0.1:5672/%2F' } },
      tools: [{ ...tool, celery: { ...tool.celery, connection: 'rabbit', ...extra } }],
    });
    const rpc = parseBridgeConfig(amqp({ resultBackend: 'rpc', resultQueue: 'mine.results' })).tools[0];
    expect(rpc && isCeleryTool(rpc) && rpc.celery).toMatchObject({ resultBackend: 'rpc', resultQueue: 'mine.results' });
    expect(parseBridgeConfig(amqp({ queueArguments: { 'x-max-priority': 10 } })).tools).toHaveLength(1);
    expect(problems(amqp({ resultBackend: undefined }))).toEqual([
      'tools[0].celery.resultBackend: required with an AMQP broker: a Redis connection or rpc',
    ]);
    expect(problems(amqp({ resultBackend: 'rabbit' }))).toEqual([
      'tools[0].celery.resultBackend: must be a Redis connection or rpc, not the AMQP "rabbit"',
    ]);
    expect(problems(amqp({ connection: 'py', resultBackend: 'rpc', queueArguments: {} }))).toEqual([
      'tools[0].celery.resultBackend: rpc needs an AMQP broker (a connection url amqp:// or amqps://)',
      'tools[0].celery.queueArguments: only with an AMQP broker',
    ]);
    expect(problems(amqp({ resultQueue: 'x' }))).toEqual(['tools[0].celery.resultQueue: only with resultBackend: rpc']);
    expect(problems({ ...amqp({}), connections: { py: { url: 'http://x' } } })).toEqual([
      'connections.py.url: must start with redis://, rediss://, amqp:// or amqps://',
    ]);
  });
});

describe('celery messages', () => {
  it('picks positional and keyword arguments from the tool arguments', () => {
    const { celery } = celeryOf(yaml);
    expect(celeryArguments(celery, { path: '/a', dpi: 3 })).toEqual({ args: ['/a'], kwargs: { dpi: 3 } });
    expect(celeryArguments({ ...celery, kwargs: undefined }, { path: '/a' })).toEqual({ args: ['/a'], kwargs: {} });
    const plain = { ...celery, args: undefined, kwargs: undefined };
    expect(celeryArguments(plain, { path: '/a' })).toEqual({ args: [], kwargs: { path: '/a' } });
  });

  it('writes message protocol v2 in kombu’s Redis envelope, and the revoke broadcast', () => {
    const { celery } = celeryOf(yaml);
    const now = Date.parse('2026-01-01T00:00:00Z');
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    const parts = taskParts(celery, 'task-1', { path: '/a', dpi: 3 }, now, { traceparent });
    const message = JSON.parse(taskMessage('celery', parts));
    expect(JSON.parse(Buffer.from(message.body, 'base64').toString())).toEqual([
      ['/a'],
      { dpi: 3 },
      { callbacks: null, errbacks: null, chain: null, chord: null },
    ]);
    expect(message.headers).toMatchObject({
      lang: 'py',
      task: 'reports.render_pdf',
      id: 'task-1',
      root_id: 'task-1',
      timelimit: [600, 540],
      expires: '2026-01-01T01:00:00.000+00:00',
      argsrepr: '<1 args>',
      traceparent,
    });
    expect(message.properties).toMatchObject({
      correlation_id: 'task-1',
      priority: 5,
      body_encoding: 'base64',
      delivery_info: { exchange: '', routing_key: 'celery' },
    });
    // On AMQP the same headers and body go as they are, with `reply_to` naming the `rpc://` results queue.
    const rpc = taskParts(celery, 'task-1', { path: '/a', dpi: 3 }, now, undefined, 'taskgate.celery.results');
    expect(rpc.headers).toEqual({ ...message.headers, traceparent: undefined });
    expect(rpc.properties).toEqual({
      correlation_id: 'task-1',
      reply_to: 'taskgate.celery.results',
      delivery_mode: 2,
      priority: 5,
      expiration: '3600000',
    });
    expect([0, 2, 3, 5, 9].map((priority) => celeryQueueList('celery', priority))).toEqual([
      'celery',
      'celery',
      'celery\x06\x163',
      'celery\x06\x163',
      'celery\x06\x169',
    ]);
    const revoke = JSON.parse(revokeMessage('task-1', true, now));
    expect(JSON.parse(Buffer.from(revoke.body, 'base64').toString())).toEqual({
      method: 'revoke',
      arguments: { task_id: 'task-1', terminate: true, signal: 'SIGTERM' },
      destination: null,
      pattern: null,
      matcher: null,
    });
    expect(revoke.properties.delivery_info).toEqual({ exchange: 'celery.pidbox', routing_key: '' });
  });

  it('maps each Celery state', () => {
    const tool = { result: 'auto' as const };
    const failure = { exc_type: 'ValueError', exc_message: ['no ink'], exc_module: 'builtins' };
    expect(celeryStep(tool, { status: 'STARTED', result: { pid: 1, hostname: 'w1' } })).toEqual({
      kind: 'status',
      text: 'Running on Celery worker w1',
    });
    expect(celeryStep(tool, { status: 'PROGRESS', result: { current: 3, total: 10, message: 'page 3' } })).toEqual({
      kind: 'progress',
      progress: 3,
      total: 10,
      message: 'page 3',
    });
    expect(celeryStep(tool, { status: 'RETRY', result: failure })).toEqual({
      kind: 'status',
      text: 'Retrying after ValueError: no ink',
    });
    expect(celeryStep(tool, { status: 'FAILURE', result: failure, traceback: 'Traceback...' })).toEqual({
      kind: 'failed',
      result: { content: [{ type: 'text', text: 'ValueError: no ink' }], isError: true },
      traceback: 'Traceback...',
    });
    expect(celeryStep(tool, { status: 'SUCCESS', result: 'done' })).toEqual({
      kind: 'completed',
      result: { content: [{ type: 'text', text: 'done' }] },
    });
    expect(
      celeryStep(tool, { status: 'REVOKED', result: { exc_type: 'TaskRevokedError', exc_message: ['terminated'] } }),
    ).toEqual({ kind: 'cancelled', text: 'Revoked in Celery (TaskRevokedError: terminated)' });
    expect(celeryStep(tool, { status: 'RENDERING', result: null })).toEqual({
      kind: 'status',
      text: 'Celery state RENDERING',
    });
  });
});
