import type { Logger, SessionRecord, StoredResult, StoredTask } from '@taskgate/core';
import type { JsonRpcRequest } from '@taskgate/protocol';
import type { InputRequestsView } from './pending-inputs.js';

/**
 * One request, whichever revision it came on, as its codec decoded it: who asks (the owner of the tasks it
 * touches), what the client declared, and the services the handler names (`S`, each handler's own list).
 */
export interface Call<S> {
  readonly services: S;
  /** Owner of the tasks the request touches: the principal, or the session id when auth is off. */
  readonly owner: string;
  readonly principal?: string;
  readonly logger: Logger;
  /**
   * The client as it declared itself: once per session (`initialize`), or in each request's `_meta` on
   * revision 2026-07-28 (where `sessionId` is empty).
   */
  readonly session: SessionRecord;
  readonly request: JsonRpcRequest;
  /** How the caller's tasks are found (see `callerTask`). */
  readonly tasksBy: TaskScope;
  /** The session whose feed carries what the request's tasks send (2025-11-25), if any. */
  readonly sessionId?: string;
  /** The revision stamped on what the request creates when no session holds it (2026-07-28). */
  readonly stamp?: '2026-07-28';
  /**
   * True when the revision answers a call's input requests inline (`input_required` rounds) rather than
   * relaying them on a stream: a tool that gathers its first input before it becomes a task can then do so.
   */
  readonly inlineInput: boolean;
  readonly readAhead?: TaskReadAhead;
  /** On a wire with input rounds (2026-07-28), a read's answers so far: its worker may ask for more. */
  readonly readInput?: { readonly answers: Readonly<Record<string, unknown>> };
}

/**
 * How a request finds the caller's tasks: `owner`, the owner's (a principal, or the session), telling an
 * expired task from an unknown one; `record`, the record read by id and shown to its owner only; `id`, with
 * auth off on revision 2026-07-28, any task that revision created, by its unguessable id.
 */
export type TaskScope = 'owner' | 'record' | 'id';

/**
 * The caller's task that a `tasks/get` or `tasks/result` names, read together with the session (one round
 * trip for both, see `wire/rev2025-11-25/session-request.ts`): it counts only once the session is checked.
 */
export interface TaskReadAhead {
  readonly taskId: string;
  /** The record (and for tasks/result its stored result), for the request's owner; rejects like a look-up. */
  readonly read: Promise<{ readonly task: StoredTask; readonly outcome?: StoredResult }>;
}

/**
 * What a handler answers, revision-neutral; the request's codec encodes it (errors are thrown, from the
 * catalogue): a result; a task created; a call running, whose answer the revision carries its own way (a
 * resumable stream, or a wait with input rounds); a task shown; a task whose result the request waits for.
 */
export type HandlerAnswer =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | { readonly kind: 'task'; readonly task: StoredTask; readonly immediateResponse?: string }
  | { readonly kind: 'call'; readonly task: StoredTask }
  /** A task as `tasks/get` shows it, with its stored result and pending inputs where the revision inlines them. */
  | {
      readonly kind: 'view';
      readonly task: StoredTask;
      readonly outcome?: StoredResult;
      readonly inputRequests?: InputRequestsView;
    }
  | { readonly kind: 'pending'; readonly task: StoredTask };

/** The answer of a handler that answers at once: a result. */
export function result(value: Record<string, unknown>): HandlerAnswer {
  return { kind: 'result', result: value };
}
