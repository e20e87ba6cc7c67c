import { toTask } from '@taskgate/core';
import {
  type ClientRequestMethod,
  type ClientRequestParams,
  type JsonRpcRequest,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  parseClientRequestParams,
  type RequestId,
} from '@taskgate/protocol';
import { HttpError } from '../../messages/http-error.js';
import type { HandlerAnswer } from '../../methods/context.js';
import type { TaskCancel } from '../../methods/tasks-cancel.js';
import type { TaskGet } from '../../methods/tasks-get.js';
import type { ToolCall } from '../../methods/tools-call.js';
import type { WireHeaders } from '../codec.js';
import { requestProtocolVersion } from './protocol-version.js';

/**
 * The codec of revision 2025-11-25, pure: headers and body in, a request the method table runs out; a handler's
 * answer in, the message that goes on the wire out. No I/O (the session is read by the caller of `decode`).
 */

/** A request of this revision as its headers and body say, before its session is read. */
export interface SessionRequest {
  readonly id: RequestId;
  readonly method: string;
  /** MCP-Protocol-Version, or the transport's default when absent; `initialize` negotiates it instead. */
  readonly protocolVersion?: string;
  /** The session the request names (Mcp-Session-Id); absent only for `initialize`. */
  readonly sessionId?: string;
}

/**
 * Headers and body → the request: `initialize` names no session (400 otherwise); every other request an
 * MCP-Protocol-Version this revision speaks and a well-formed Mcp-Session-Id (400 otherwise).
 */
export function decode(headers: WireHeaders, request: JsonRpcRequest): SessionRequest {
  const { id, method } = request;
  if (method === 'initialize') {
    if (headers['mcp-session-id'] !== undefined) {
      throw HttpError.badRequest('Bad Request: initialize starts a new session; send it without Mcp-Session-Id');
    }
    return { id, method };
  }
  return { id, method, protocolVersion: requestProtocolVersion(headers), sessionId: sessionIdOf(headers) };
}

/** The HTTP status of a JSON-RPC error on this revision: always 200 (a refusal before the session is an `HttpError`). */
export function errorStatus(_code: number): number {
  return 200;
}

/** The Mcp-Session-Id of a request: 400 when the header is missing or malformed. */
export function sessionIdOf(headers: WireHeaders): string {
  const header = headers['mcp-session-id'];
  if (header === undefined) {
    throw HttpError.badRequest('Bad Request: the Mcp-Session-Id header is required; send initialize first');
  }
  const sessionId = Array.isArray(header) ? (header[0] ?? '') : header;
  if (!/^[\x21-\x7e]{1,256}$/.test(sessionId)) {
    throw HttpError.badRequest('Bad Request: Mcp-Session-Id must be 1-256 visible ASCII characters');
  }
  return sessionId;
}

/** The methods of an established session. */
export type SessionMethod = Exclude<ClientRequestMethod, 'initialize'>;

/** The params a method's handler gets, where this revision's differ from the protocol's. */
interface Neutral {
  'tools/call': ToolCall;
  'tasks/get': TaskGet;
  'tasks/cancel': TaskCancel;
}

/** Each method's params in its handler's neutral form. */
export type SessionParams = { [M in SessionMethod]: M extends keyof Neutral ? Neutral[M] : ClientRequestParams<M> };

/**
 * How this revision asks for what the handlers' neutral params say: a task with the `task` param (and its
 * ttl); tasks/get shows the task alone; cancelling a finished task is refused (CNL-1).
 */
const NEUTRAL: { readonly [M in keyof Neutral]: (params: ClientRequestParams<M>) => Neutral[M] } = {
  'tools/call': (params) => ({
    name: params.name,
    arguments: params.arguments ?? {},
    ...(params._meta?.progressToken !== undefined && { progressToken: params._meta.progressToken }),
    task:
      params.task === undefined
        ? { kind: 'none' }
        : { kind: 'param', ...(params.task.ttl !== undefined && { ttl: params.task.ttl }) },
  }),
  'tasks/get': (params) => ({ taskId: params.taskId, detailed: false }),
  'tasks/cancel': (params) => ({ taskId: params.taskId, finished: 'refuse' }),
};

/**
 * A method's params through the protocol's schema, in its handler's form: -32601 for a method this revision
 * does not answer, -32602 naming what does not fit.
 */
export function decodeParams<M extends SessionMethod>(method: M, params: unknown): SessionParams[M] {
  const parsed = parseClientRequestParams(method, params);
  const neutral = (NEUTRAL as Readonly<Record<string, (params: unknown) => unknown>>)[method];
  return (neutral === undefined ? parsed : neutral(parsed)) as SessionParams[M];
}

/** An answer on this revision: a result sent as JSON, or a resumable SSE stream that ends with the response. */
export type SessionAnswer =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | {
      readonly kind: 'stream';
      /** Which streams `close()` ends at once (`result`) and which it lets finish first (`direct`). */
      readonly role: 'result' | 'direct';
      /** The task (or direct call's hidden record) whose messages and outcome the stream carries, as read. */
      readonly task: Extract<HandlerAnswer, { kind: 'call' }>['task'];
    };

/**
 * A handler's answer on this revision: `CreateTaskResult` with `task` (and the tool's immediate response,
 * CRT-5); the task's fields at the top level for tasks/get (no related-task _meta, META-3); a running call, or
 * a task whose result is awaited, as a resumable SSE stream that relays its requests and notices.
 */
export function encode(outcome: HandlerAnswer): SessionAnswer {
  switch (outcome.kind) {
    case 'result':
      return outcome;
    case 'task': {
      const immediate = outcome.immediateResponse;
      const meta = immediate === undefined ? undefined : { _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: immediate } };
      return { kind: 'result', result: { task: toTask(outcome.task), ...meta } };
    }
    case 'view':
      return { kind: 'result', result: toTask(outcome.task) };
    case 'call':
      return { kind: 'stream', role: 'direct', task: outcome.task };
    case 'pending':
      return { kind: 'stream', role: 'result', task: outcome.task };
  }
}
