/**
 * The wire layer: one codec per protocol revision over one set of revision-neutral method handlers
 * (`methods/`). A codec owns what differs between revisions and nothing else:
 *
 * - how a request arrives: inside a session opened by `initialize` (2025-11-25), or stateless with what
 *   `initialize` negotiated in each request's `_meta` and mirrored in headers (2026-07-28);
 * - which methods exist on its wire (a method outside the list is -32601 by absence);
 * - how params are decoded into a handler's neutral form (always through the protocol package's schemas),
 *   e.g. how a task is asked for: the `task` param, or the tasks extension in `_meta`;
 * - how a handler's answer is encoded: `CreateTaskResult` with `task` and `ttl`, or flat with
 *   `resultType: "task"` and `ttlMs`; a running call's input requests relayed as server-to-client requests on
 *   a resumable stream, or answered as `input_required` with `inputRequests` and a signed `requestState`.
 *
 * A codec names no HTTP framework: it reads headers and a parsed body and gives back a `WireMessage`. The
 * runner (`run/`) does what every request shares (limits, metrics, tracing, error mapping) and writes it.
 * A rule of a method (the `taskSupport` check, argument validation, who may see a task) lives in its handler
 * once; a codec only names which variant of a rule its revision asks for.
 */
import type { Logger, StoredTask } from '@taskgate/core';
import { type JsonRpcMessage, type JsonRpcRequest, ProtocolError, type RequestId } from '@taskgate/protocol';
import type { Caller } from '../auth/caller.js';
import type { SessionContext } from '../streams/stream-context.js';

/** A request's HTTP headers by lower-case name, as Node gives them. */
export type WireHeaders = Readonly<Record<string, string | string[] | undefined>>;

/** One header's value (the first, when it was sent more than once). */
export function headerOf(headers: WireHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** A refusal with the HTTP status its revision gives it; the JSON-RPC error keeps the request's id. */
export class WireRefusal extends ProtocolError {
  constructor(
    readonly status: number,
    code: number,
    message: string,
    data?: unknown,
  ) {
    super(code, message, data);
  }
}

/** A stream the runner opens for a revision (`subscriptions/listen`): what it sends and when it ends. */
export interface OpenStream {
  send(message: Record<string, unknown>): void;
  readonly isOpen: boolean;
  readonly signal: AbortSignal;
}

/** The way back to the client while a request runs, as the runner lends it to the revision. */
export interface AnswerChannel {
  /** Sends a notification ahead of the response: the answer becomes an SSE stream that ends with it. */
  notify(message: Record<string, unknown>): void;
  /** Opens the answer as a long-lived SSE stream of its own. */
  openStream(): OpenStream;
  /** Aborted when the client goes away before the answer was sent. */
  readonly signal: AbortSignal;
}

/**
 * A handler's answer as its revision puts it on the wire: a JSON-RPC result (with the session it opened, for
 * `initialize`); a resumable task stream that ends with the response (2025-11-25); or a stream the revision
 * drove to its end itself (`subscriptions/listen`).
 */
export type WireMessage =
  | { readonly kind: 'result'; readonly result: Record<string, unknown>; readonly sessionId?: string }
  | {
      readonly kind: 'stream';
      /** Which streams `close()` ends at once (`result`) and which it lets finish first (`direct`). */
      readonly role: 'result' | 'direct';
      /** The task (or direct call's hidden record) whose messages and outcome the stream carries, as read. */
      readonly task: StoredTask;
      /** The session the stream belongs to: it may wait for hours, and keeps this rather than the request. */
      readonly session: SessionContext;
    }
  | { readonly kind: 'streamed' };

/** One request as its revision decoded it, ready for the runner. */
export interface WireRequest {
  readonly id: RequestId;
  readonly method: string;
  /** Whose rate limits and stream places the request spends. */
  readonly owner: string;
  readonly logger: Logger;
  /** True when the answer may be a task stream, which holds one of the owner's open-stream places. */
  readonly mayStream: boolean;
  /** Runs the method's handler and encodes its answer; throws what the client is answered with. */
  run(channel: AnswerChannel): Promise<WireMessage>;
}

/** What one revision gives the runner (`run/run-request.ts`): everything else is the same for both. */
export interface Revision<S> {
  /** The HTTP status of a JSON-RPC error on this revision (a `WireRefusal` carries its own). */
  errorStatus(code: number): number;
  /** A notification or a client's response: handled here; the runner answers 202. */
  accept(services: S, headers: WireHeaders, caller: Caller, message: JsonRpcMessage, logger: Logger): Promise<void>;
  /** A request decoded (its refusals thrown) and bound to its caller, ready to run. */
  open(
    services: S,
    headers: WireHeaders,
    caller: Caller,
    request: JsonRpcRequest,
    logger: Logger,
  ): Promise<WireRequest>;
}
