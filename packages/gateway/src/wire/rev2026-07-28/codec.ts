import {
  type ClientRequestParams,
  ErrorCode,
  type JsonRpcRequest,
  ProtocolError,
  parseClientRequestParams,
  parseUpdateTaskParams,
  REV2026_PROTOCOL_VERSION,
  type RequestId,
  TASKS_EXTENSION,
} from '@taskgate/protocol';
import type { HandlerAnswer } from '../../methods/context.js';
import type { TaskCancel } from '../../methods/tasks-cancel.js';
import type { TaskGet } from '../../methods/tasks-get.js';
import type { TaskUpdate } from '../../methods/tasks-update.js';
import type { ToolCall } from '../../methods/tools-call.js';
import type { WireHeaders } from '../codec.js';
import { checkEnvelope, type Rev2026Meta } from './envelope.js';
import { paramHeaders } from './param-headers.js';
import { createTaskResult, detailedTask } from './task-view.js';

/**
 * The codec of revision 2026-07-28, pure: headers and body in, a request the method table runs out; a handler's
 * answer in, the result that goes on the wire out. No I/O, no session: what `initialize` negotiated on
 * 2025-11-25 travels in each request's `_meta`.
 */

/** The methods of this revision (a method outside the list is -32601, HTTP 404). */
export const REV2026_METHODS = [
  'server/discover',
  'subscriptions/listen',
  'tools/list',
  'tools/call',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
  'prompts/get',
  'completion/complete',
  'tasks/get',
  'tasks/update',
  'tasks/cancel',
] as const;

export type Rev2026Method = (typeof REV2026_METHODS)[number];

const METHODS: ReadonlySet<string> = new Set(REV2026_METHODS);

/** A request of this revision as its headers and body say. */
export interface Rev2026Request {
  readonly id: RequestId;
  readonly method: Rev2026Method;
  /** What the request's `_meta` declares. */
  readonly meta: Rev2026Meta;
  /** The request's `Mcp-Param-*` headers by lower-case name (SEP-2243). */
  readonly paramHeaders: ReadonlyMap<string, string>;
  /** The params as sent (an empty object when there are none). */
  readonly params: Record<string, unknown>;
}

function paramsOf(request: JsonRpcRequest): Record<string, unknown> {
  const params = request.params;
  return typeof params === 'object' && params !== null && !Array.isArray(params)
    ? (params as Record<string, unknown>)
    : {};
}

/**
 * Headers and body → the request: the envelope checked (headers against the body and `_meta`, `envelope.ts`),
 * then the method (-32601 for one this revision does not have: `initialize`, `ping`, `tasks/result`, …).
 */
export function decode(headers: WireHeaders, request: JsonRpcRequest): Rev2026Request {
  const { id, method } = request;
  const params = paramsOf(request);
  const meta = checkEnvelope(headers, method, params);
  if (!METHODS.has(method)) {
    throw ProtocolError.methodNotFound(`Method not found: ${method} (revision ${REV2026_PROTOCOL_VERSION})`);
  }
  return { id, method: method as Rev2026Method, meta, paramHeaders: paramHeaders(headers), params };
}

/** The HTTP status of a JSON-RPC error on this wire (a `WireRefusal` carries its own). */
export function errorStatus(code: number): number {
  if (code === ErrorCode.MethodNotFound) return 404;
  if (
    code === ErrorCode.HeaderMismatch ||
    code === ErrorCode.MissingClientCapability ||
    code === ErrorCode.UnsupportedProtocolVersion
  ) {
    return 400;
  }
  return 200;
}

/** True when a request's `_meta` declares the tasks extension. */
export function declaresTasks(meta: Rev2026Meta): boolean {
  const extensions = meta.clientCapabilities.extensions;
  return typeof extensions === 'object' && extensions !== null && TASKS_EXTENSION in extensions;
}

/** `params.inputResponses`: absent, or an object of answers (each an object); -32602 otherwise. */
export function inputResponsesOf(params: Record<string, unknown>): Record<string, unknown> | undefined {
  const responses = params.inputResponses;
  if (responses === undefined) return undefined;
  if (typeof responses !== 'object' || responses === null || Array.isArray(responses)) {
    throw ProtocolError.invalidParams('Invalid params: params.inputResponses must be an object of answers by key');
  }
  for (const [key, value] of Object.entries(responses)) {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw ProtocolError.invalidParams(
        `Invalid params: params.inputResponses["${key.slice(0, 64)}"] must be an object`,
      );
    }
  }
  return responses as Record<string, unknown>;
}

/** A round of `tools/call`: the call in its handler's form, and the round's fields lifted off the params. */
export interface CallRound {
  readonly call: Pick<ToolCall, 'name' | 'arguments' | 'progressToken' | 'task'>;
  /** The signed state of an earlier round, as sent (checked against its key by the method table). */
  readonly requestState?: unknown;
  readonly inputResponses?: Record<string, unknown>;
}

/** Each method's params in its handler's neutral form. */
export interface Rev2026Params {
  'tools/call': CallRound;
  'tools/list': ClientRequestParams<'tools/list'>;
  'resources/list': ClientRequestParams<'resources/list'>;
  'resources/templates/list': ClientRequestParams<'resources/templates/list'>;
  'resources/read': ClientRequestParams<'resources/read'>;
  'prompts/list': ClientRequestParams<'prompts/list'>;
  'prompts/get': ClientRequestParams<'prompts/get'>;
  'completion/complete': ClientRequestParams<'completion/complete'>;
  'tasks/get': TaskGet;
  'tasks/update': TaskUpdate;
  'tasks/cancel': TaskCancel;
}

/** The methods that exist only with the tasks extension declared (-32021 otherwise). */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

type Decoders = {
  readonly [M in keyof Rev2026Params]: (params: Record<string, unknown>, meta: Rev2026Meta) => Rev2026Params[M];
};

/**
 * How this revision asks for what the handlers' neutral params say, through the protocol's schemas: the server
 * decides task-ness per tool with the tasks extension declared (a legacy `task` param changes nothing);
 * tasks/get shows the task with its outcome inlined; cancelling a finished task is acknowledged.
 */
const DECODERS: Decoders = {
  'tools/call': (raw, meta) => {
    const { inputResponses: _responses, requestState, ...rest } = raw;
    const responses = inputResponsesOf(raw);
    const params = parseClientRequestParams('tools/call', rest);
    return {
      call: {
        name: params.name,
        arguments: params.arguments ?? {},
        ...(params._meta?.progressToken !== undefined && { progressToken: params._meta.progressToken }),
        task: declaresTasks(meta) ? { kind: 'extension' } : { kind: 'no-extension' },
      },
      ...(requestState !== undefined && { requestState }),
      ...(responses !== undefined && { inputResponses: responses }),
    };
  },
  'tools/list': (p) => parseClientRequestParams('tools/list', p),
  'resources/list': (p) => parseClientRequestParams('resources/list', p),
  'resources/templates/list': (p) => parseClientRequestParams('resources/templates/list', p),
  'resources/read': (p) => parseClientRequestParams('resources/read', p),
  'prompts/list': (p) => parseClientRequestParams('prompts/list', p),
  'prompts/get': (p) => parseClientRequestParams('prompts/get', p),
  'completion/complete': (p) => parseClientRequestParams('completion/complete', p),
  'tasks/get': (p) => ({ taskId: parseClientRequestParams('tasks/get', p).taskId, detailed: true }),
  'tasks/update': (p) => {
    const params = parseUpdateTaskParams(p);
    return { taskId: params.taskId, inputResponses: params.inputResponses };
  },
  'tasks/cancel': (p) => ({ taskId: parseClientRequestParams('tasks/cancel', p).taskId, finished: 'acknowledge' }),
};

/**
 * A method's params in its handler's form: -32021 for a tasks method without the tasks extension declared,
 * -32602 naming what does not fit.
 */
export function decodeParams<M extends keyof Rev2026Params>(
  method: M,
  params: Record<string, unknown>,
  meta: Rev2026Meta,
): Rev2026Params[M] {
  if (TASK_METHODS.has(method) && !declaresTasks(meta)) {
    throw new ProtocolError(
      ErrorCode.MissingClientCapability,
      `Missing required client capability: ${method} needs the ${TASKS_EXTENSION} extension`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  return DECODERS[method](params, meta);
}

/** The methods whose answers may be cached (`ttlMs`, `cacheScope`). */
const CACHEABLE: ReadonlySet<string> = new Set([
  'tools/list',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'prompts/list',
]);

/**
 * A handler's answer on this revision, every result with its `resultType`: a flat `CreateTaskResult`
 * (`resultType: "task"`, `ttlMs`); a task shown as a `DetailedTask` with its outcome or input requests inlined;
 * a result as `complete`, cacheable for the lists and reads. A running call has no encoding of its own: the
 * method table waits for it (`call-rounds.ts`).
 */
export function encode(method: string, outcome: HandlerAnswer): Record<string, unknown> {
  switch (outcome.kind) {
    case 'task':
      return createTaskResult(outcome.task);
    case 'view':
      return detailedTask(outcome.task, outcome.outcome, outcome.inputRequests);
    case 'result':
      return {
        ...outcome.result,
        resultType: 'complete',
        ...(CACHEABLE.has(method) && { ttlMs: 0, cacheScope: 'private' }),
      };
    default:
      throw new Error(`${method} answered ${outcome.kind}`);
  }
}

/** An error as this revision reports it: an unknown resource is -32602 here (-32002 on 2025-11-25, SEP-2164). */
export function encodeError(error: unknown): unknown {
  if (error instanceof ProtocolError && error.code === ErrorCode.ResourceNotFound) {
    return new ProtocolError(ErrorCode.InvalidParams, error.message, error.data);
  }
  return error;
}
