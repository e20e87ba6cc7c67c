import type {
  EventBus,
  InputRequests,
  Keys,
  ListCursorCodec,
  SessionRecord,
  SessionStore,
  TaskOutbox,
  TaskStore,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';
import type { JsonRpcErrorObject, JsonRpcRequest, RequestId } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { Logger } from '../logger.js';
import type { ResolvedGatewayOptions } from '../options.js';
import type { SseStream } from '../sse/sse-stream.js';
import type { StreamRegistry } from '../sse/stream-registry.js';
import type { OutboxRelay } from '../tasks/outbox-relay.js';
import type { TaskWatcher } from '../tasks/task-watcher.js';
import type { ArgumentValidator } from './argument-validator.js';

/** The process-wide pieces every request handler uses. Nothing here is per-session state. */
export interface GatewayServices {
  readonly options: ResolvedGatewayOptions;
  readonly logger: Logger;
  readonly keys: Keys;
  readonly redis: Redis;
  readonly tasks: TaskStore;
  readonly sessions: SessionStore;
  readonly catalog: ToolCatalog;
  readonly queues: ToolQueues;
  readonly bus: EventBus;
  readonly outbox: TaskOutbox;
  readonly inputs: InputRequests;
  readonly watcher: TaskWatcher;
  readonly relay: OutboxRelay;
  readonly validator: ArgumentValidator;
  readonly streams: StreamRegistry;
  readonly toolCursors: ListCursorCodec;
  /** Safety re-read interval of waiters (ms). */
  readonly pollMs: number;
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

/** One JSON-RPC request of an established session. */
export interface RpcContext extends SessionContext {
  readonly request: JsonRpcRequest;
}

/** What a handler answers: a result sent as JSON, or an SSE stream that ends with the response. */
export type Reply =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | {
      readonly kind: 'stream';
      /** Which streams `close()` ends at once (`result`) and which it lets finish first (`direct`). */
      readonly role: 'result' | 'direct';
      /** Writes the stream's messages and, unless the client went away, the response; the caller ends it. */
      readonly run: (stream: SseStream) => Promise<void>;
    };

/** A JSON-RPC success response. */
export function resultMessage(id: RequestId, result: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

/** A JSON-RPC error response. */
export function errorMessage(id: RequestId | undefined, error: JsonRpcErrorObject): Record<string, unknown> {
  return id === undefined ? { jsonrpc: '2.0', error } : { jsonrpc: '2.0', id, error };
}
