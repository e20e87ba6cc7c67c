import type {
  InputRequests,
  ListCursorCodec,
  OfferingCatalog,
  StoredTask,
  TaskOutcome,
  ToolCatalog,
} from '@taskgate/core';
import type { JsonRpcRequest } from '@taskgate/protocol';
import type { GatewayMetrics } from '../ops/gateway-metrics.js';
import type { SessionContext, StreamServices } from '../streams/stream-context.js';
import type { ArgumentValidator } from './argument-validator.js';

/** What the method handlers use besides the streams' pieces. */
export interface MethodServices extends StreamServices {
  readonly catalog: ToolCatalog;
  /** Resources, resource templates and prompts workers offer. */
  readonly offerings: OfferingCatalog;
  readonly inputs: InputRequests;
  readonly validator: ArgumentValidator;
  readonly toolCursors: ListCursorCodec;
  readonly metrics: GatewayMetrics;
}

/** A message of an established session, from an authenticated caller. */
export interface CallerContext extends SessionContext {
  readonly services: MethodServices;
}

/**
 * The caller's task that a `tasks/get` or `tasks/result` names, read together with the session (one round
 * trip for both, see `http/post.ts`): it counts only once the session is checked.
 */
export interface TaskReadAhead {
  readonly taskId: string;
  /** The record (and for tasks/result its stored outcome), for the request's owner; rejects like a look-up. */
  readonly read: Promise<{ readonly task: StoredTask; readonly outcome?: TaskOutcome }>;
}

/** One JSON-RPC request of an established session. */
export interface RpcContext extends CallerContext {
  readonly request: JsonRpcRequest;
  readonly readAhead?: TaskReadAhead;
  /** On a wire with input rounds (2026-07-28), a read's answers so far: its worker may ask for more. */
  readonly readInput?: { readonly answers: Readonly<Record<string, unknown>> };
}

/** What a handler answers: a result sent as JSON, or a resumable SSE stream that ends with the response. */
export type Reply =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | {
      readonly kind: 'stream';
      /** Which streams `close()` ends at once (`result`) and which it lets finish first (`direct`). */
      readonly role: 'result' | 'direct';
      /** The task (or direct call's hidden record) whose messages and outcome the stream carries. */
      readonly taskId: string;
      /** That task as the handler read it, so the stream does not read it again. */
      readonly task?: StoredTask;
    };
