import type { ServerResponse } from 'node:http';
import {
  errorMessage,
  isRedisUnavailable,
  Keys,
  type Logger,
  type SessionRecord,
  type StoredResult,
  type StoredTask,
  type TaskEnd,
  type TaskWaiter,
  taskExpired,
  type WaitOutcome,
} from '@taskgate/core';
import { type RequestId, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { cancelUnlessResumed } from '../tasks/cancel-call.js';
import { auditRetrieval, directCallOutcome, terminalOutcome } from '../tasks/task-outcome.js';
import { carryOutbox, type OutboxCarrier } from './carry-outbox.js';
import { HELD_LEASE_MS, openTaskConnection } from './connect-stream.js';
import type { LoggedStream } from './logged-stream.js';
import type { SessionContext } from './stream-context.js';
import { newStreamIds } from './stream-ids.js';

/** The request a task stream answers: `tasks/result` of a task, or a direct (non-task) `tools/call`. */
export interface TaskStreamTarget {
  readonly kind: 'result' | 'direct';
  readonly taskId: string;
  readonly rpcId: RequestId;
  /** The task as the request's handler read it (its fixed fields: ttl, progress token), so it is not read again. */
  readonly task?: StoredTask;
}

/** Whether the client understands priming events (empty data): protocol 2025-11-25 and later, as in the SDK. */
export function understandsPriming(session: Pick<SessionRecord, 'protocolVersion'>): boolean {
  return session.protocolVersion >= '2025-11-25';
}

/**
 * Answers a POST with a new resumable SSE stream for `target`: its state in Redis, primed with an event id
 * and the `retry` field (transport spec; then `primed` is called), then run until the response is out or the
 * client goes away (see `runTaskStream`: resolves once the stream is set up).
 */
export async function openTaskStream(
  ctx: SessionContext,
  res: ServerResponse,
  target: TaskStreamTarget,
  primed?: () => void,
): Promise<void> {
  const { services } = ctx;
  const ids = newStreamIds(ctx.session.sessionId);
  const state = {
    streamId: ids.streamId,
    kind: target.kind,
    session: Keys.digest(ctx.session.sessionId),
    taskId: target.taskId,
    rpcId: target.rpcId,
  };
  // Recorded under this process before it takes the leases: if it dies, another one releases them.
  const held = { streamId: ids.streamId, connectionId: ids.connectionId, taskId: target.taskId };
  await services.held.hold(held);
  await services.events.create(state, ids.connectionId, HELD_LEASE_MS);
  const stream = openTaskConnection(services, res, ids, target.kind, ctx.logger, understandsPriming(ctx.session));
  // Opened after shutdown ended the others: ended at once, after its priming event, like them.
  if (target.kind === 'result') services.streams.endIfClosing(stream.sse);
  primed?.();
  services.held.dropWhenClosed(held, stream);
  return runTaskStream(ctx, stream, target);
}

/**
 * Runs a tasks/result or direct-call stream on this connection, fresh or resumed: carries the task's outbox
 * while it holds the task's carrier lease (messages with the original progressToken, PRG-1, and for tasks
 * the related-task `_meta`, INP-2), waits for the task to be terminal (RES-2), then logs and writes the
 * response and marks the stream done. A client that goes away leaves a task running (RES-5); a direct call
 * is cancelled unless its stream is resumed, on any pod, within the grace period. Resolves once the stream is
 * set up: the waiting stream is its `StreamWait` alone (no promise, no suspended frame), counted in the
 * registry's `waiting`, and the task's end or the connection's runs the rest.
 */
export async function runTaskStream(
  ctx: SessionContext,
  stream: LoggedStream,
  target: TaskStreamTarget,
): Promise<void> {
  const { services } = ctx;
  try {
    const record = target.task ?? (await services.tasks.read(target.taskId));
    // The task's channel and its outbox's are subscribed together; the outcome is acted on once the outbox is carried.
    const wait = new StreamWait(ctx, stream, target);
    const carrier = record === undefined ? undefined : await carryOutbox(ctx, stream, record, target.kind);
    // Not awaited: the wait's end runs from the follower's call (or the connection's end).
    wait.carried(record, carrier);
  } catch (error) {
    await streamFailed(ctx, stream, target, error);
    stream.end();
  }
}

/** After the wait: acts on the task's end (or the connection's), writes the response, and ends the stream. */
async function endTaskStream(
  ctx: SessionContext,
  stream: LoggedStream,
  target: TaskStreamTarget,
  after: { readonly record: StoredTask | undefined; readonly carrier: OutboxCarrier | undefined },
  waited: WaitOutcome,
): Promise<void> {
  const { services } = ctx;
  try {
    if (waited.kind === 'aborted') {
      if (target.kind === 'direct' && after.record !== undefined && !stream.sse.endedByServer) {
        cancelUnlessResumed(services, after.record, stream.streamId, streamLogger(ctx, stream, target));
      }
      return;
    }
    // A terminal task's outcome does not change: the finish's message carried it (small ones), or it is read
    // along with the final drain (one round trip).
    const outcome =
      target.kind === 'result' && waited.kind === 'terminal'
        ? (carried(target, waited) ?? services.tasks.outcome(ctx.owner, target.taskId, true))
        : undefined;
    outcome?.catch(() => {});
    await after.carrier?.drain(waited.kind === 'terminal' && waited.announced === true);
    await (target.kind === 'result'
      ? finishResult(ctx, stream, target, waited, outcome)
      : finishDirect(ctx, stream, target, waited));
  } catch (error) {
    await streamFailed(ctx, stream, target, error);
  } finally {
    stream.end();
    services.streams.waitEnded();
  }
}

/**
 * A task stream that failed: Redis did not answer (the stream ends undone, so the client resumes it with
 * Last-Event-ID and gets every event it missed once Redis answers again, instead of an error that would end its
 * wait for the result), or anything else (its JSON-RPC error is the stream's last event).
 */
async function streamFailed(
  ctx: SessionContext,
  stream: LoggedStream,
  target: TaskStreamTarget,
  error: unknown,
): Promise<void> {
  if (isRedisUnavailable(error)) {
    streamLogger(ctx, stream, target).warn(
      { err: errorMessage(error) },
      'task stream interrupted: Redis does not answer',
    );
    stream.end(ctx.services.options.sseRetryMs);
    return;
  }
  streamLogger(ctx, stream, target).error({ err: errorMessage(error) }, 'task stream failed');
  await stream.emit(errorResponse(target.rpcId, toJsonRpcError(error)), { done: '1' }).catch(() => false);
}

/**
 * The outcome the task's finish message carried, with the task: only for a stream whose handler read the task
 * as its caller's (`target.task`, owner checked), whose owner the message does not name and never changes.
 */
function carried(
  target: TaskStreamTarget,
  waited: Extract<WaitOutcome, { kind: 'terminal' }>,
): Promise<{ task: StoredTask; outcome?: StoredResult }> | undefined {
  if (waited.outcome === undefined || target.task === undefined) return undefined;
  return Promise.resolve({ task: { ...waited.task, ownerId: target.task.ownerId }, outcome: waited.outcome });
}

/** The stream's logger, made when something is to be logged (most streams log nothing). */
function streamLogger(ctx: SessionContext, stream: LoggedStream, target: TaskStreamTarget): Logger {
  return ctx.logger.child({ taskId: target.taskId, stream: stream.streamId });
}

/**
 * tasks/result: the exact stored outcome with the related-task `_meta` (RES-1, RES-3), or its error; `read` is
 * the outcome's read when it was started already.
 */
async function finishResult(
  ctx: SessionContext,
  stream: LoggedStream,
  target: TaskStreamTarget,
  waited: Exclude<WaitOutcome, { kind: 'aborted' }>,
  read?: ReturnType<SessionContext['services']['tasks']['outcome']>,
): Promise<void> {
  let message: Record<string, unknown>;
  try {
    if (waited.kind === 'gone') throw taskExpired();
    // Batched: the waiters a burst of finished tasks wakes together read their outcomes in one pipeline.
    const { task, outcome } = await (read ?? ctx.services.tasks.outcome(ctx.owner, target.taskId, true));
    auditRetrieval(ctx.logger, task);
    message = resultMessage(target.rpcId, terminalOutcome(task, outcome));
  } catch (error) {
    message = errorResponse(target.rpcId, toJsonRpcError(error));
  }
  await stream.finish(target.taskId, message, { done: '1' });
}

/** A direct call: its result or error; nothing when the client cancelled it (notifications/cancelled). */
async function finishDirect(
  ctx: SessionContext,
  stream: LoggedStream,
  target: TaskStreamTarget,
  waited: Exclude<WaitOutcome, { kind: 'aborted' }>,
): Promise<void> {
  const { services } = ctx;
  const { sessionId } = ctx.session;
  // notifications/cancelled closes the call: a cancelled request gets no response.
  const byClient =
    waited.kind === 'terminal' &&
    waited.task.status === 'cancelled' &&
    !(await services.calls.isOpen(sessionId, target.rpcId));
  if (byClient) {
    await stream.finish(target.taskId, undefined, { done: '1' });
  } else {
    const task = waited.kind === 'terminal' ? waited.task : undefined;
    const known = waited.kind === 'terminal' ? carried(target, waited) : undefined;
    const caller = { tasks: ctx.services.tasks, owner: ctx.owner };
    await stream.finish(target.taskId, await directCallOutcome(caller, target.rpcId, target.taskId, task, known), {
      done: '1',
    });
  }
  await services.calls.close(sessionId, target.rpcId).catch(() => undefined);
}

const ABORTED: WaitOutcome = { kind: 'aborted' };

/**
 * A task stream's wait for its task's end: the follower's waiter and the stream's end watcher at once, and
 * what runs the stream's end (`endTaskStream`) once the outbox is carried (`carried`) and the wait is over.
 * A waiting stream holds this one entry (no promise, no signal listener, no closure, no suspended frame).
 */
class StreamWait implements TaskWaiter {
  readonly #ctx: SessionContext;
  readonly #stream: LoggedStream;
  readonly #target: TaskStreamTarget;
  /** How the wait ended, until the stream was set up (then it runs the end at once). */
  #outcome: WaitOutcome | undefined;
  #after: { readonly record: StoredTask | undefined; readonly carrier: OutboxCarrier | undefined } | undefined;

  constructor(ctx: SessionContext, stream: LoggedStream, target: TaskStreamTarget) {
    this.#ctx = ctx;
    this.#stream = stream;
    this.#target = target;
    if (stream.whenEnded(this)) ctx.services.follower.follow(target.taskId, this);
    else this.#outcome = ABORTED;
  }

  /** The stream is set up (its outbox carried): it waits now, counted until its end ran. */
  carried(record: StoredTask | undefined, carrier: OutboxCarrier | undefined): void {
    this.#after = { record, carrier };
    this.#ctx.services.streams.waitBegan();
    if (this.#outcome !== undefined) this.#run(this.#outcome);
  }

  taskEnded(end: TaskEnd): void {
    this.#settle(end);
  }

  /** The connection ended: the wait is over (`aborted`), and the task no longer followed for it. */
  streamEnded(): void {
    if (this.#outcome !== undefined) return;
    this.#ctx.services.follower.unfollow(this.#target.taskId, this);
    this.#settle(ABORTED);
  }

  #settle(outcome: WaitOutcome): void {
    if (this.#outcome !== undefined) return;
    this.#outcome = outcome;
    if (this.#after !== undefined) this.#run(outcome);
  }

  #run(outcome: WaitOutcome): void {
    const after = this.#after;
    if (after === undefined) return;
    void endTaskStream(this.#ctx, this.#stream, this.#target, after, outcome);
  }
}
