import type { ServerResponse } from 'node:http';
import type { OwnedTaskRead, TaskChange, TaskEnd, TaskWaiter } from '@taskgate/core';
import { isTerminalStatus, ProtocolError, type RequestId, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import { openQuietStream, type PendingResult } from './quiet-result.js';
import { SseStream } from './sse-stream.js';
import type { SessionContext } from './stream-context.js';
import { openTaskStream } from './task-stream.js';

/** How the wait in the process ended; `quiet`: it ran out with nothing to carry. */
type Decision =
  | { readonly kind: 'answer'; readonly read: OwnedTaskRead }
  | { readonly kind: 'stream' }
  | { readonly kind: 'quiet' }
  | { readonly kind: 'gone' };

/**
 * Answers a tasks/result whose task is still running. A task that ends within `resultStreamAfterMs` is
 * answered as JSON with nothing written: the request waits in the process, on the task's channel and its
 * outbox's. Once the wait runs out, the answer becomes a quiet stream (`openQuietStream`): an SSE response
 * primed with an id any pod can resume, still storing nothing. A logged stream (its state, log and leases in
 * Redis; `openTaskStream`) opens as soon as there is something to carry (an outbox entry, `input_required`).
 * A gateway that shuts down ends the streams after their priming event, and the client resumes on another
 * pod. A client that goes away meanwhile leaves nothing. In a session whose GET stream is open, a message
 * the task posts before the logged stream claims the task's outbox may go out on that GET stream instead
 * (INP-5: clients expect task messages on any SSE stream); each goes out once, on one of the two.
 */
export function answerResult(ctx: SessionContext, res: ServerResponse, pending: PendingResult): Promise<void> {
  // Returned, not awaited: the waiting stream keeps no suspended frame of this function.
  if (pending.task.status === 'input_required') return openTaskStream(ctx, res, { kind: 'result', ...pending });
  return decideThenAnswer(ctx, res, pending, ctx.services.options.resultStreamAfterMs, false);
}

/**
 * Resumes a quiet stream (its `Last-Event-ID` named the task and the request): the task is read as the
 * caller's, then answered on this GET's SSE response, or waited for on a new quiet stream, or on a logged one
 * when it has something to carry.
 */
export async function resumeQuietResult(
  ctx: SessionContext,
  res: ServerResponse,
  target: { readonly taskId: string; readonly rpcId: RequestId },
): Promise<void> {
  let first: OwnedTaskRead;
  try {
    first = await ctx.services.tasks.outcome(ctx.owner, target.taskId, true);
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    return writeLastEvent(res, errorResponse(target.rpcId, toJsonRpcError(error)));
  }
  if (isTerminalStatus(first.task.status)) {
    auditRetrieval(ctx.logger, first.task);
    return writeLastEvent(res, resultMessage(target.rpcId, terminalOutcome(first.task, first.outcome)));
  }
  const pending = { ...target, task: first.task };
  if (first.task.status === 'input_required') return openTaskStream(ctx, res, { kind: 'result', ...pending });
  return decideThenAnswer(ctx, res, pending, 0, true);
}

/** Shutdown waits until this request answered or primed its stream (then ends it), not for the stream's end. */
function decideThenAnswer(
  ctx: SessionContext,
  res: ServerResponse,
  pending: PendingResult,
  waitMs: number,
  asEvent: boolean,
): Promise<void> {
  if (ctx.services.streams.closing.aborted) return openTaskStream(ctx, res, { kind: 'result', ...pending });
  let primed: () => void = () => {};
  const decided = new Promise<void>((resolve) => {
    primed = resolve;
  });
  const answered = waitThenAnswer(ctx, res, pending, { primed, waitMs, asEvent });
  ctx.services.streams.deciding(Promise.race([decided, answered]));
  // Returned, not awaited: a stream that waits for its task keeps no suspended frame of this function.
  return answered;
}

async function waitThenAnswer(
  ctx: SessionContext,
  res: ServerResponse,
  pending: PendingResult,
  how: { readonly primed: () => void; readonly waitMs: number; readonly asEvent: boolean },
): Promise<void> {
  const wait = new ResultWait(ctx, res, pending.taskId);
  const write = how.asEvent ? writeLastEvent : writeJson;
  // Counted while it waits in the process; a stream it opens counts itself from its set-up on.
  ctx.services.streams.waitBegan();
  // Once primed, the stream follows the same task and listens to the same outbox (synchronously, before this
  // microtask runs): this wait's hold is given up then at no command's cost, and the waiting stream keeps none of it.
  const handOver = (): void => {
    how.primed();
    queueMicrotask(() => void wait.release());
  };
  try {
    const decision = await wait.decide(how.waitMs);
    if (decision.kind === 'gone') return;
    // Synchronous up to its priming event: the quiet stream follows the task before this wait lets it go.
    if (decision.kind === 'quiet' && openQuietStream(ctx, res, pending)) return;
    if (decision.kind === 'stream' || decision.kind === 'quiet') {
      return await openTaskStream(ctx, res, { kind: 'result', ...pending }, handOver);
    }
    auditRetrieval(ctx.logger, decision.read.task);
    write(res, resultMessage(pending.rpcId, terminalOutcome(decision.read.task, decision.read.outcome)));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    if (!res.headersSent) write(res, errorResponse(pending.rpcId, toJsonRpcError(error)));
  } finally {
    ctx.services.streams.waitEnded();
    how.primed();
    await wait.release();
  }
}

const STREAM: Decision = { kind: 'stream' };
const QUIET: Decision = { kind: 'quiet' };
const GONE: Decision = { kind: 'gone' };
const LIVE = (): boolean => true;
const NOT_LIVE = (): boolean => false;

function writeJson(res: ServerResponse, message: Record<string, unknown>): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(message));
}

/** A resumed stream's whole answer: one SSE event, unlogged (the task gives it again), and the end. */
function writeLastEvent(res: ServerResponse, message: Record<string, unknown>): void {
  new SseStream(res, { headersWithFirstEvent: true }).last(undefined, JSON.stringify(message));
}

/**
 * One tasks/result's wait in the process: a waiter of the task follower (the task's channel: its changes and
 * its outbox's arrivals), and what ends it.
 */
type Signal = Decision | Extract<TaskEnd, { kind: 'terminal' }>;

/**
 * What wins when several signals came before the wait's continuation ran: the client gone; then something
 * to carry (an outbox arrival is published before the task's end, and a stream drains it); then the end;
 * then the wait running out.
 */
const RANK: Readonly<Record<Signal['kind'], number>> = { quiet: 1, answer: 2, terminal: 2, stream: 3, gone: 4 };

class ResultWait implements TaskWaiter {
  /** `decide` reads the task once its follow is live. */
  readonly readsOnceLive = true;
  readonly #ctx: SessionContext;
  readonly #res: ServerResponse;
  readonly #taskId: string;
  #following = false;
  /** The strongest signal so far (`RANK`), read once the wait's continuation runs. */
  #signal: Signal | undefined;
  #wake: () => void = () => {};

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
    this.#settle(end.kind === 'terminal' ? end : STREAM);
  }

  /** A request for input is carried by a stream; a change that may have gone unseen is the stream's to find. */
  taskChanged(change: TaskChange | undefined): void {
    if (change === undefined || change.task.status === 'input_required') this.#settle(STREAM);
  }

  /** An outbox entry is carried by a stream. */
  outboxArrived(): void {
    this.#settle(STREAM);
  }

  #settle(signal: Signal): void {
    if (this.#signal !== undefined && RANK[this.#signal.kind] >= RANK[signal.kind]) return;
    this.#signal = signal;
    this.#wake();
  }

  /** Waits up to `waitMs` (0: not at all) for the task's end; `quiet` when it ran out with nothing to carry. */
  async decide(waitMs: number): Promise<Decision> {
    const { services, owner } = this.#ctx;
    const woken = new Promise<void>((resolve) => {
      this.#wake = resolve;
    });
    const quiet = (): void => this.#settle(QUIET);
    const gone = (): void => this.#settle(GONE);
    const timer = waitMs > 0 ? setTimeout(quiet, waitMs) : undefined;
    this.#res.once('close', gone);
    const closing = services.streams.closing;
    closing.addEventListener('abort', quiet, { once: true });
    try {
      if (this.#res.destroyed) return GONE;
      // The task's channel (through the follower) carries its changes and its outbox's arrivals: once it is
      // live, one read (record, outcome and outbox), so nothing in between is missed.
      this.#following = true;
      services.follower.follow(this.#taskId, this);
      if (!(await services.follower.live(this.#taskId).then(LIVE, NOT_LIVE))) return STREAM;
      const read = await services.tasks.outcome(owner, this.#taskId, true);
      if (isTerminalStatus(read.task.status)) return { kind: 'answer', read };
      if (read.outbox === true || read.task.status === 'input_required') return STREAM;
      if (timer === undefined) quiet();
      await woken;
      // Every signal that came before this continuation counts (the strongest wins); none can come after it.
      const decision = this.#signal ?? QUIET;
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
      closing.removeEventListener('abort', quiet);
      // Decided: later messages change nothing.
      this.#signal = GONE;
      this.#wake = () => {};
    }
  }

  async release(): Promise<void> {
    if (this.#following) this.#ctx.services.follower.unfollow(this.#taskId, this);
    this.#following = false;
  }
}
