import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { TraceCarrier } from '@taskgate/core';
import { isRecord, mapValue } from '../mapping.js';
import type { CeleryOptions } from './celery-config.js';

/** Seconds a control broadcast stays valid: workers drop one older than this (kombu's pidbox `expires`). */
const CONTROL_TTL_S = 10;

const base64 = (value: unknown): string => Buffer.from(JSON.stringify(value), 'utf8').toString('base64');

/** Python's isoformat of a UTC instant, as Celery writes `expires`. */
const isoUtc = (ms: number): string => new Date(ms).toISOString().replace('Z', '+00:00');

/** The positional and keyword arguments of a call, per the tool's `args` and `kwargs`. */
export function celeryArguments(
  celery: CeleryOptions,
  args: Record<string, unknown>,
): { args: unknown[]; kwargs: Record<string, unknown> } {
  const positional = celery.args === undefined ? [] : (mapValue(celery.args, args) as unknown[]);
  const kwargs = celery.kwargs ?? (celery.args === undefined ? 'arguments' : {});
  if (kwargs === 'arguments') return { args: positional, kwargs: args };
  const mapped = mapValue(kwargs, args);
  return { args: positional, kwargs: isRecord(mapped) ? mapped : {} };
}

/** One Celery task message, protocol v2, before a transport wraps it: its headers, body and AMQP properties. */
export interface CeleryTaskParts {
  readonly headers: Record<string, unknown>;
  /** `[args, kwargs, embed]`, sent as JSON. */
  readonly body: readonly unknown[];
  readonly properties: {
    readonly correlation_id: string;
    readonly reply_to: string;
    readonly delivery_mode: 2;
    readonly priority: number;
    readonly expiration?: string;
  };
}

/**
 * One Celery task message, protocol v2 with the JSON serializer, as `app.send_task` writes it: headers name
 * the task and carry its id (= the taskgate task id) and limits, the body is `[args, kwargs, embed]`, the
 * properties make it persistent with its priority; `replyTo` names the queue Celery's `rpc://` backend sends
 * its states to ('' for none). `trace` (the bridge's span) goes in the headers.
 */
export function taskParts(
  celery: CeleryOptions,
  taskId: string,
  args: Record<string, unknown>,
  now: number,
  trace?: TraceCarrier,
  replyTo = '',
): CeleryTaskParts {
  const { options } = celery;
  const call = celeryArguments(celery, args);
  const headers = {
    lang: 'py',
    task: celery.task,
    id: taskId,
    shadow: null,
    eta: null,
    expires: options.expiresMs === undefined ? null : isoUtc(now + options.expiresMs),
    group: null,
    group_index: null,
    retries: 0,
    timelimit: [options.timeLimitS ?? null, options.softTimeLimitS ?? null],
    root_id: taskId,
    parent_id: null,
    // Celery's worker logs these (its own producers write Python reprs); never the argument values.
    argsrepr: `<${call.args.length} args>`,
    kwargsrepr: `<${Object.keys(call.kwargs).length} kwargs>`,
    origin: `taskgate-bridge@${hostname()}`,
    ignore_result: false,
    replaced_task_nesting: 0,
    stamped_headers: null,
    stamps: {},
    // W3C trace context, where OpenTelemetry's Celery instrumentation looks for it: a traced worker's spans
    // become children of the bridge's.
    ...trace,
  };
  const body = [call.args, call.kwargs, { callbacks: null, errbacks: null, chain: null, chord: null }];
  return {
    headers,
    body,
    properties: {
      correlation_id: taskId,
      reply_to: replyTo,
      delivery_mode: 2,
      priority: options.priority ?? 0,
      ...(options.expiresMs !== undefined && { expiration: String(options.expiresMs) }),
    },
  };
}

/**
 * The kombu Redis transport's envelope of one Celery task message (see `taskParts`): the body is base64 in
 * the envelope, the properties route it to `queue` directly.
 */
export function taskMessage(queue: string, parts: CeleryTaskParts): string {
  const { headers, body, properties } = parts;
  const { priority, ...rest } = properties;
  return JSON.stringify({
    body: base64(body),
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers,
    properties: {
      ...rest,
      delivery_info: { exchange: '', routing_key: queue },
      priority,
      body_encoding: 'base64',
      // kombu's ack emulation keys its `unacked` hash by this tag: the task id keeps it unique and findable.
      delivery_tag: headers.id,
    },
  });
}

/**
 * The `revoke` command on Celery's control channel (kombu pidbox, fanout exchange `celery.pidbox`), as
 * `app.control.revoke(task_id, terminate=...)` broadcasts it to every worker, without asking for replies.
 */
export function revokeMessage(taskId: string, terminate: boolean, now: number): string {
  const { body, headers } = revokeParts(taskId, terminate, now);
  return JSON.stringify({
    body: base64(body),
    'content-encoding': 'utf-8',
    'content-type': 'application/json',
    headers,
    properties: {
      delivery_mode: 2,
      delivery_info: { exchange: 'celery.pidbox', routing_key: '' },
      priority: 0,
      body_encoding: 'base64',
      delivery_tag: randomUUID(),
    },
  });
}

/** The body and headers of a `revoke` broadcast (see `revokeMessage`), as any kombu transport sends them. */
export function revokeParts(
  taskId: string,
  terminate: boolean,
  now: number,
): { body: Record<string, unknown>; headers: Record<string, unknown> } {
  return {
    body: {
      method: 'revoke',
      arguments: { task_id: taskId, terminate, signal: 'SIGTERM' },
      destination: null,
      pattern: null,
      matcher: null,
    },
    headers: { clock: 1, expires: now / 1000 + CONTROL_TTL_S },
  };
}
