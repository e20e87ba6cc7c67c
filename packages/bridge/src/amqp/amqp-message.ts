import type { TraceCarrier } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { Options } from 'amqplib';
import { completedResult, failedResult, isRecord, mapValue, type ResultConfig } from '../mapping.js';
import type { AmqpOptions } from './amqp-config.js';

/** A message to publish: its body and its properties (the request's, or a cancel message's). */
export interface OutgoingMessage {
  readonly content: Buffer;
  readonly options: Options.Publish & { messageId: string };
}

/** The body as `contentType` says: JSON text, or (text/plain) a string as it is and anything else as JSON. */
function encode(value: unknown, contentType: AmqpOptions['contentType']): Buffer {
  const text = contentType === 'text/plain' && typeof value === 'string' ? value : (JSON.stringify(value) ?? 'null');
  return Buffer.from(text, 'utf8');
}

/**
 * The request of a call: persistent, `correlation_id` and `message_id` = the task id, `reply_to` = the reply
 * queue; the configured static headers and the trace context (W3C `traceparent`/`tracestate`) in its headers.
 */
export function requestMessage(
  amqp: AmqpOptions,
  taskId: string,
  args: Record<string, unknown>,
  replyTo: string,
  now: number,
  trace?: TraceCarrier,
): OutgoingMessage {
  return {
    content: encode(mapValue(amqp.body, args), amqp.contentType),
    options: {
      persistent: true,
      correlationId: taskId,
      messageId: taskId,
      replyTo,
      contentType: amqp.contentType,
      contentEncoding: 'utf-8',
      timestamp: Math.floor(now / 1000),
      appId: 'taskgate',
      headers: { ...amqp.headers, ...trace },
    },
  };
}

/** The cancel message of a cancelled call, when the tool has `cancel:`; `$` is { taskId, arguments }. */
export function cancelMessage(
  amqp: AmqpOptions,
  taskId: string,
  args: Record<string, unknown>,
): OutgoingMessage | undefined {
  if (amqp.cancel === undefined) return undefined;
  return {
    content: encode(mapValue(amqp.cancel.body, { taskId, arguments: args }), amqp.contentType),
    options: {
      persistent: true,
      correlationId: taskId,
      messageId: `${taskId}:cancel`,
      contentType: amqp.contentType,
      contentEncoding: 'utf-8',
      appId: 'taskgate',
      headers: { ...amqp.headers },
    },
  };
}

/** A reply's value: JSON when it says so or parses as JSON, else its text. */
export function replyValue(content: Buffer, contentType: string | undefined): unknown {
  const text = content.toString('utf8');
  const json = contentType === undefined || contentType === '' || /json/i.test(contentType);
  if (!json) return text;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

/**
 * A reply as the tool's result: with `error:`, a JSON object whose value at that path is present (not null nor
 * false) is a tool error with its text; otherwise the value mapped per `result`, as for every bridged tool.
 */
export function replyResult(
  tool: ResultConfig & { readonly amqp: AmqpOptions },
  content: Buffer,
  contentType: string | undefined,
): CallToolResult {
  const value = replyValue(content, contentType);
  if (tool.amqp.error !== undefined && isRecord(value)) {
    const error = mapValue(tool.amqp.error, value);
    if (error !== undefined && error !== null && error !== false) {
      return failedResult(typeof error === 'string' ? error : JSON.stringify(error));
    }
  }
  return completedResult(tool, value);
}

/** Where a request went, for messages: the routing key and, unless it is the default one, the exchange. */
export function destination(amqp: Pick<AmqpOptions, 'exchange' | 'routingKey'>): string {
  return amqp.exchange === ''
    ? `routing key '${amqp.routingKey}' on the default exchange`
    : `routing key '${amqp.routingKey}' on exchange '${amqp.exchange}'`;
}
