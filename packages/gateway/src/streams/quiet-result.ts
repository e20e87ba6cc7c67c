import type { ServerResponse } from 'node:http';
import {
  EventLog,
  errorMessage,
  isRedisUnavailable,
  Keys,
  type StoredTask,
  type TaskChange,
  type TaskEnd,
  type TaskWaiter,
} from '@taskgate/core';
import { type RequestId, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import { adoptTaskConnection, HELD_LEASE_MS } from './connect-stream.js';
import { SseStream, type SseStreamOwner } from './sse-stream.js';
import type { SessionContext } from './stream-context.js';
import { runTaskStream, understandsPriming } from './task-stream.js';

/** A tasks/result of a task that was not terminal when the request read it. */
export interface PendingResult {
  readonly taskId: string;
  readonly rpcId: RequestId;
  readonly task: StoredTask;
}

const DONE: Promise<void> = Promise.resolve();

/**
 * Opens a quiet stream for a tasks/result whose task is still running and has nothing to carry: an SSE
 * response primed with an id that names the task and the request (`QuietIds`), then a `QuietResult`. False
 * (and nothing written) when the client does not understand priming events (before 2025-11-25), or the
 * request id is too long for such an id: the caller opens a logged stream.
 */
export function openQuietStream(ctx: SessionContext, res: ServerResponse, pending: PendingResult): boolean {
  const { services } = ctx;
  if (!understandsPriming(ctx.session)) return false;
  const streamId = EventLog.newStreamId(ctx.session.sessionId);
  const primingId = services.quietIds.encode(Keys.digest(ctx.session.sessionId), { streamId, ...pending });
  if (primingId === undefined) return false;
  const sse = new SseStream(res, { headersWithFirstEvent: true });
  sse.event(primingId, '', services.options.sseRetryMs);
  const quiet = new QuietResult(ctx, sse, pending, streamId);
  sse.owner = quiet;
  // The client may have gone before the response started: the end is told here, as no one else will.
  if (!sse.isOpen) quiet.connectionEnded();
  services.streams.add(sse, 'result');
  // Opened after shutdown ended the others: ended at once, after its priming event, like them.
  services.streams.endIfClosing(sse);
  return true;
}

/**
 * A tasks/result that waits on an SSE response and stores nothing until there is something to store. It
 * holds the socket, this entry (the follower's waiter and the stream's owner) and nothing in Redis: no event
 * log, no lease, no carrier. Its priming id lets the client resume it on any pod (`resumeQuietResult`). When the
 * task ends, the response is written as the stream's last event, unlogged: a client that lost it resumes from
 * the priming id and gets it again from the task. When the task has something to carry first (an outbox
 * entry, `input_required`, a change that may have gone unseen), the stream becomes a logged one under the
 * same stream id (its state created then), and `runTaskStream` runs it on the same connection.
 */
class QuietResult implements TaskWaiter, SseStreamOwner {
  readonly #ctx: SessionContext;
  readonly #sse: SseStream;
  readonly #pending: PendingResult;
  readonly #streamId: string;
  #state: 'waiting' | 'answering' | 'logging' | 'ended' = 'waiting';

  constructor(ctx: SessionContext, sse: SseStream, pending: PendingResult, streamId: string) {
    this.#ctx = ctx;
    this.#sse = sse;
    this.#pending = pending;
    this.#streamId = streamId;
    ctx.services.streams.waitBegan();
    ctx.services.follower.follow(pending.taskId, this);
  }

  taskEnded(end: TaskEnd): void {
    if (this.#state !== 'waiting') return;
    // Announced by the task's channel: every outbox arrival before it reached this waiter, so none is left
    // to carry. Learnt otherwise (a re-read), or gone: the logged stream drains and reports, as it always did.
    if (end.kind !== 'terminal' || end.announced !== true) {
      void this.#log();
      return;
    }
    this.#state = 'answering';
    void this.#answer(end);
  }

  taskChanged(change: TaskChange | undefined): void {
    if (change === undefined || change.task.status === 'input_required') void this.#log();
  }

  outboxArrived(): void {
    void this.#log();
  }

  heartbeat(): Promise<unknown> {
    return DONE;
  }

  connectionEnded(): void {
    if (this.#state === 'ended' || this.#state === 'logging') return;
    const answering = this.#state === 'answering';
    this.#state = 'ended';
    if (!answering) this.#ctx.services.follower.unfollow(this.#pending.taskId, this);
    this.#ctx.services.streams.waitEnded();
  }

  closed(): Promise<unknown> {
    return DONE;
  }

  /** Writes the response as the stream's last event; Redis away: ends with a retry hint (the client resumes). */
  async #answer(end: Extract<TaskEnd, { kind: 'terminal' }>): Promise<void> {
    const { services, owner } = this.#ctx;
    const { task: first, taskId, rpcId } = this.#pending;
    let message: Record<string, unknown>;
    try {
      // The task was the caller's at the request's read, and a task's owner never changes.
      const read =
        end.outcome === undefined
          ? await services.tasks.outcome(owner, taskId, true)
          : { task: { ...end.task, ownerId: first.ownerId }, outcome: end.outcome };
      auditRetrieval(this.#ctx.logger, read.task);
      message = resultMessage(rpcId, terminalOutcome(read.task, read.outcome));
    } catch (error) {
      if (isRedisUnavailable(error)) {
        this.#ctx.logger.warn({ taskId, err: errorMessage(error) }, 'task stream interrupted: Redis does not answer');
        this.#sse.end(services.options.sseRetryMs);
        return;
      }
      message = errorResponse(rpcId, toJsonRpcError(error));
    }
    this.#sse.last(undefined, JSON.stringify(message));
  }

  /**
   * Becomes a logged stream: its state under the priming id's stream id, this process's hold on it, then
   * `runTaskStream` on this connection (its wait follows the task before this one stops following it).
   */
  async #log(): Promise<void> {
    if (this.#state !== 'waiting') return;
    this.#state = 'logging';
    const { services } = this.#ctx;
    const { taskId, rpcId } = this.#pending;
    const ids = { streamId: this.#streamId, connectionId: EventLog.newConnectionId() };
    const held = { ...ids, taskId };
    const session = Keys.digest(this.#ctx.session.sessionId);
    const state = { streamId: ids.streamId, kind: 'result' as const, session, taskId, rpcId };
    try {
      await services.held.hold(held);
      await services.events.create(state, ids.connectionId, HELD_LEASE_MS);
    } catch (error) {
      this.#ctx.logger.warn({ taskId, err: errorMessage(error) }, 'task stream interrupted: Redis does not answer');
      this.#stop();
      // The client resumes from the priming id, on any pod: the stream's state, if it was written, is found then.
      this.#sse.end(services.options.sseRetryMs);
      return;
    }
    // From here the logged stream owns the connection: its end gives the leases up, even if it came meanwhile.
    const stream = adoptTaskConnection(services, this.#sse, ids, this.#ctx.logger);
    services.held.dropWhenClosed(held, stream);
    if (!stream.isOpen) return this.#stop();
    // Its wait follows the task synchronously, before this one stops: the task's subscription stays as it is.
    const running = runTaskStream(this.#ctx, stream, { kind: 'result', ...this.#pending });
    this.#stop();
    await running;
  }

  /** Stops following the task and being counted as a waiter (the logged stream counts itself). */
  #stop(): void {
    if (this.#state === 'ended') return;
    this.#state = 'ended';
    this.#ctx.services.follower.unfollow(this.#pending.taskId, this);
    this.#ctx.services.streams.waitEnded();
  }
}
