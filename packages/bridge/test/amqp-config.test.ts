import { describe, expect, it } from 'vitest';
import { cancelMessage, replyResult, requestMessage } from '../src/amqp/amqp-message.js';
import { BridgeConfigError, isAmqpTool, loadBridgeConfig, parseBridgeConfig } from '../src/config.js';

const yaml = `
connections:
  rabbit: { url: amqp://guest:guest@127.0.0.1:5672/%2F }
  results: { url: redis://127.0.0.1:6380/1 }
tools:
  - name: fib
    description: Fibonacci, from the existing RPC service.
    inputSchema: { type: object, properties: { n: { type: integer } }, required: [n] }
    amqp:
      connection: rabbit
      routingKey: rpc_queue
      body: $.n
      headers: { x-source: taskgate }
      timeoutMs: 600000
      error: $.error
      cancel: { routingKey: rpc_cancel, body: { id: $.taskId, n: $.arguments.n } }
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

const amqpOf = (text: string) => {
  const tool = loadBridgeConfig(text).tools[0];
  if (tool === undefined || !isAmqpTool(tool)) throw new Error('no amqp tool');
  return tool;
};

describe('amqp tools: config', () => {
  it('reads the documented YAML with its defaults', () => {
    const tool = amqpOf(yaml);
    expect(tool.amqp).toEqual({
      connection: 'rabbit',
      exchange: '',
      routingKey: 'rpc_queue',
      body: '$.n',
      contentType: 'application/json',
      headers: { 'x-source': 'taskgate' },
      timeoutMs: 600000,
      error: '$.error',
      cancel: { routingKey: 'rpc_cancel', body: { id: '$.taskId', n: '$.arguments.n' } },
    });
    expect(tool.taskSupport).toBe('required');
  });

  it('names the path of every problem', () => {
    const config = loadBridgeConfig(yaml);
    const tool = config.tools[0] as Record<string, unknown>;
    const amqp = tool.amqp as Record<string, unknown>;
    const withAmqp = (changes: Record<string, unknown>) => ({
      ...config,
      tools: [{ ...tool, amqp: { ...amqp, ...changes } }],
    });
    expect(problems(withAmqp({ routingKey: '', error: 'error', contentType: 'text/html', extra: 1 }))).toEqual([
      'tools[0].amqp.routingKey: must name where requests go (the queue, on the default exchange)',
      'tools[0].amqp.contentType: Invalid option: expected one of "application/json"|"text/plain"',
      'tools[0].amqp.error: must be a path of the reply such as $.error',
      'tools[0].amqp: Unrecognized key: "extra"',
    ]);
    expect(problems(withAmqp({ connection: 'nope' }))).toEqual(['tools[0].amqp.connection: unknown connection "nope"']);
    expect(problems(withAmqp({ connection: 'results' }))).toEqual([
      'tools[0].amqp.connection: "results" is not an AMQP connection (its url must start with amqp:// or amqps://)',
    ]);
    expect(problems(withAmqp({ cancel: { body: 1 } }))).toEqual([
      'tools[0].amqp.cancel.routingKey: Invalid input: expected string, received undefined',
    ]);
  });
});

describe('amqp tools: messages', () => {
  const tool = amqpOf(yaml);

  it('publishes a persistent request: correlation_id and message_id = task id, reply_to, headers, trace', () => {
    const message = requestMessage(tool.amqp, 'task-1', { n: 10 }, 'taskgate.replies', 1_700_000_000_000, {
      traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
    });
    expect(message.content.toString()).toBe('10');
    expect(message.options).toEqual({
      persistent: true,
      correlationId: 'task-1',
      messageId: 'task-1',
      replyTo: 'taskgate.replies',
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      timestamp: 1_700_000_000,
      appId: 'taskgate',
      headers: { 'x-source': 'taskgate', traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    const text = { ...tool.amqp, body: '$.s', contentType: 'text/plain' as const };
    expect(requestMessage(text, 't', { s: 'as is' }, 'r', 0).content.toString()).toBe('as is');
    expect(requestMessage(text, 't', { s: { a: 1 } }, 'r', 0).content.toString()).toBe('{"a":1}');
  });

  it('fills the cancel message from { taskId, arguments }', () => {
    const message = cancelMessage(tool.amqp, 'task-1', { n: 10 });
    expect(JSON.parse(message?.content.toString() ?? '')).toEqual({ id: 'task-1', n: 10 });
    expect(message?.options.correlationId).toBe('task-1');
    expect(cancelMessage({ ...tool.amqp, cancel: undefined }, 'task-1', {})).toBeUndefined();
  });

  it('maps replies: JSON or text per result, the error field as a tool error', () => {
    expect(replyResult(tool, Buffer.from('55'), undefined)).toEqual({ content: [{ type: 'text', text: '55' }] });
    expect(replyResult(tool, Buffer.from('{"error":"no ink"}'), 'application/json')).toEqual({
      content: [{ type: 'text', text: 'no ink' }],
      isError: true,
    });
    expect(replyResult(tool, Buffer.from('{"error":null,"pages":2}'), 'application/json')).toEqual({
      content: [{ type: 'text', text: '{"error":null,"pages":2}' }],
    });
    expect(replyResult(tool, Buffer.from('{"pages":2}'), 'text/plain')).toEqual({
      content: [{ type: 'text', text: '{"pages":2}' }],
    });
    expect(replyResult({ ...tool, result: 'json' }, Buffer.from('plain words'), undefined)).toEqual({
      content: [{ type: 'text', text: '"plain words"' }],
    });
  });
});
