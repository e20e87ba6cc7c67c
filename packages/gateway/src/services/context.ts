import type {
  DirectCalls,
  EventBus,
  EventLog,
  InputRequests,
  ListCursorCodec,
  Logger,
  OfferingCatalog,
  ResourceSubscriptions,
  SessionFeed,
  SessionRecord,
  SessionStore,
  StoredTask,
  TaskDelivery,
  TaskOutbox,
  TaskOutcome,
  TaskStore,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';
import type { JsonRpcErrorObject, JsonRpcRequest, RequestId } from '@taskgate/protocol';
import type { RateLimits } from '../limits/rate-limits.js';
import type { StreamQuota } from '../limits/stream-quota.js';
import type { GatewayMetrics } from '../metrics/gateway-metrics.js';
import type { ResolvedGatewayOptions } from '../options.js';
import type { TaskWatcher } from '../tasks/task-watcher.js';
import type { HeldStreams } from '../transport/held-streams.js';
import type { StreamRegistry } from '../transport/stream-registry.js';
import type { ArgumentValidator } from './argument-validator.js';

/** The process-wide pieces every request handler uses. Nothing here is per-session state. */
export interface GatewayServices {
  readonly options: ResolvedGatewayOptions;
  readonly logger: Logger;
  readonly tasks: TaskStore;
  /** The sessions' open direct calls, by JSON-RPC request id. */
  readonly calls: DirectCalls;
  readonly sessions: SessionStore;
  readonly catalog: ToolCatalog;
  /** Resources, resource templates and prompts workers offer. */
  readonly offerings: OfferingCatalog;
  /** Sessions' resource subscriptions. */
  readonly subscriptions: ResourceSubscriptions;
  readonly queues: ToolQueues;
  readonly bus: EventBus;
  readonly outbox: TaskOutbox;
  readonly inputs: InputRequests;
  readonly watcher: TaskWatcher;
  /** SSE event logs and their connection leases (resumable streams). */
  readonly events: EventLog;
  /** Which stream carries each task's outbox, and how far it went out. */
  readonly delivery: TaskDelivery;
  /** The sessions' feeds that GET streams relay. */
  readonly feed: SessionFeed;
  readonly validator: ArgumentValidator;
  readonly streams: StreamRegistry;
  /** This process's beat, and the leases of its task streams (released by another process if it dies). */
  readonly held: HeldStreams;
  readonly toolCursors: ListCursorCodec;
  readonly metrics: GatewayMetrics;
  readonly rateLimits: RateLimits;
  /** The per-principal limit of open SSE streams on this gateway. */
  readonly streamQuota: StreamQuota;
}

/** A message of an established session, from an authenticated caller. */
export interface SessionContext {
  readonly services: GatewayServices;
  readonly session: SessionRecord;
  /** Owner of the tasks the message touches: the principal, or the session id when auth is off. */
  readonly owner: string;
  readonly principal?: string;
  readonly logger: Logger;
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
export interface RpcContext extends SessionContext {
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

/** A JSON-RPC success response. */
export function resultMessage(id: RequestId, result: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

/** A JSON-RPC error response. */
export function errorResponse(id: RequestId | undefined, error: JsonRpcErrorObject): Record<string, unknown> {
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}
