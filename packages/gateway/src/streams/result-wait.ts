import type { ServerResponse } from 'node:http';
import type { OwnedTaskRead, StoredTask, TaskChange, TaskEnd, TaskWaiter } from '@taskgate/core';
import { isTerminalStatus, ProtocolError, type RequestId, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import type { SessionContext } from './stream-context.js';
import { openTaskStream } from './task-stream.js';

/** A tasks/result of a task that was not terminal when the request read it. */
export interface PendingResult {
  readonly taskId: string;
  readonly rpcId: RequestId;
  readonly task: StoredTask;
}

/** How the wait in the process ended. */
type Decision =
  | { readonly kind: 'answer'; readonly read: OwnedTaskRead }
  | { readonly kind: 'stream' }
  | { readonly kind: 'gone' };

/**
 * Answers a tasks/result whose task is still running. A resumable stream costs Redis its state, its leases
 * and its end (about twenty commands, and its state kept for the event-log retention), so the request first
 * waits in the process, on the task's channel and its outbox's, for up to `resultStreamAfterMs`: a task that
 * ends sooner is answered as JSON with nothing written. The stream opens as soon as there is something to carry
 * (an outbox entry, `input_required`), the wait runs out, or the gateway shuts down (the stream then ends after
 * its priming event, and the client resumes on another pod). A client that goes away meanwhile leaves nothing.
 * A session whose GET stream opened (it has a feed) gets the stream at once: a message the task posts while no
 * stream carries it would go out on that GET stream, and it belongs on this tasks/result stream.
 */
export async function answerResult(ctx: SessionContext, res: ServerResponse, pending: PendingResult): Promise<void> {
  const { services } = ctx;
  const waitMs = services.options.resultStreamAfterMs;
  const target = { kind: 'result' as const, ...pending };
  const streamNow =
    waitMs <= 0 || pending.task.status === 'input_required' || (await services.feed.exists(ctx.session.sessionId));
  // Returned, not awaited: the waiting stream keeps no suspended frame of this function.
  if (streamNow || services.streams.closing.aborted) return openTaskStream(ctx, res, target);
  // Shutdown waits until this request answered or primed its stream (then ends it), not for the stream's end.
  let primed: () => void = () => {};
  const decided = new Promise<void>((resolve) => {
    primed = resolve;
  });
  const answered = waitThenAnswer(ctx, res, pending, primed);
  services.streams.deciding(Promise.race([decided, answered]));
  // Returned, not awaited: a stream that waits for its task keeps no suspended frame of this function.
  return answered;
}

async function waitThenAnswer(
  ctx: SessionContext,
  res: ServerResponse,
  pending: PendingResult,
  primed: () => void,
): Promise<void> {
  const wait = new ResultWait(ctx, res, pending.taskId);
  // Counted while it waits in the process; a stream it opens counts itself from its set-up on.
  ctx.services.streams.waitBegan();
  // Once primed, the stream follows the same task and listens to the same outbox (synchronously, before this
  // microtask runs): this wait's hold is given up then at no command's cost, and the waiting stream keeps none of it.
  const handOver = (): void => {
    primed();
    queueMicrotask(() => void wait.release());
  };
  try {
    const decision = await wait.decide(ctx.services.options.resultStreamAfterMs);
    if (decision.kind === 'gone') return;
    if (decision.kind === 'stream') return await openTaskStream(ctx, res, { kind: 'result', ...pending }, handOver);
    auditRetrieval(ctx.logger, decision.read.task);
    writeJson(res, resultMessage(pending.rpcId, terminalOutcome(decision.read.task, decision.read.outcome)));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    if (!res.headersSent) writeJson(res, errorResponse(pending.rpcId, toJsonRpcError(error)));
  } finally {
    ctx.services.streams.waitEnded();
    primed();
    await wait.release();
  }
}

const LIVE = (): boolean => true;
const NOT_LIVE = (): boolean => false;

function writeJson(res: ServerResponse, message: Record<string, unknown>): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(message));
}

/**
 * One tasks/result's wait in the process: a waiter of the task follower (the task's channel: its changes and
 * its outbox's arrivals), and what ends it.
 */
class ResultWait implements TaskWaiter {
  readonly #ctx: SessionContext;
  readonly #res: ServerResponse;
  readonly #taskId: string;
  #following = false;
  #settle: (decision: Decision | Extract<TaskEnd, { kind: 'terminal' }>) => void = () => {};

  constructor(ctx: SessionContext, res: ServerResponse, taskId: string) {
    this.#ctx = ctx;
    this.#res = res;
    this.#taskId = taskId;
  }

  /**
   * The task ended (the follower no longer holds this waiter). A task gone meanwhile (expired) is the stream's
   * to report, as it always was.
   */
  taskEnded(end: TaskEnd): void {
    this.#following = false;
    this.#settle(end.kind === 'terminal' ? end : { kind: 'stream' });
  }

  /** A request for input is carried by a stream; a change that may have gone unseen is the stream's to find. */
  taskChanged(change: TaskChange | undefined): void {
    if (change === undefined || change.task.status === 'input_required') this.#settle({ kind: 'stream' });
  }

  /** An outbox entry is carried by a stream. */
  outboxArrived(): void {
    this.#settle({ kind: 'stream' });
  }

  async decide(waitMs: number): Promise<Decision> {
    const { services, owner } = this.#ctx;
    const ended = new Promise<Decision | Extract<TaskEnd, { kind: 'terminal' }>>((resolve) => {
      this.#settle = resolve;
    });
    const stream = (): void => this.#settle({ kind: 'stream' });
    const gone = (): void => this.#settle({ kind: 'gone' });
    const timer = setTimeout(stream, waitMs);
    this.#res.once('close', gone);
    const closing = services.streams.closing;
    closing.addEventListener('abort', stream, { once: true });
    try {
      if (this.#res.destroyed) return { kind: 'gone' };
      // The task's channel (through the follower) carries its changes and its outbox's arrivals: once it is
      // live, one read (record, outcome and outbox), so nothing in between is missed.
      this.#following = true;
      services.follower.follow(this.#taskId, this);
      if (!(await services.follower.live(this.#taskId).then(LIVE, NOT_LIVE))) return { kind: 'stream' };
      const read = await services.tasks.outcome(owner, this.#taskId, true);
      if (isTerminalStatus(read.task.status)) return { kind: 'answer', read };
      if (read.outbox === true || read.task.status === 'input_required') return { kind: 'stream' };
      const decision = await ended;
      if (decision.kind !== 'terminal') return decision;
      // A finish's message carries its outcome (up to a size): the answer needs no read. The task was the
      // caller's at the read above, and a task's owner never changes.
      if (decision.outcome !== undefined) {
        const task = { ...read.task, ...decision.task, ownerId: read.task.ownerId };
        return { kind: 'answer', read: { task, outcome: decision.outcome } };
      }
      return { kind: 'answer', read: await services.tasks.outcome(owner, this.#taskId, true) };
    } finally {
      clearTimeout(timer);
      this.#res.off('close', gone);
      closing.removeEventListener('abort', stream);
      // Whatever decided first wins; later messages change nothing.
      this.#settle = () => {};
    }
  }

  async release(): Promise<void> {
    if (this.#following) this.#ctx.services.follower.unfollow(this.#taskId, this);
    this.#following = false;
  }
}
