import type { ServerResponse } from 'node:http';
import { type OwnedTaskRead, recordFromFields, type StoredResult, type StoredTask } from '@taskgate/core';
import { isTerminalStatus, ProtocolError, type RequestId, type TaskStatus, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import { carriedOutcome } from '../tasks/task-watcher.js';
import type { SessionContext } from './stream-context.js';
import { openTaskStream } from './task-stream.js';

/** A tasks/result of a task that was not terminal when the request read it. */
export interface PendingResult {
  readonly taskId: string;
  readonly rpcId: RequestId;
  readonly task: StoredTask;
}

/** The task's channel announced its end: the snapshot's fields, and the outcome the message carried if any. */
type Ended = {
  readonly kind: 'ended';
  readonly fields: Record<string, string>;
  readonly outcome: StoredResult | undefined;
};

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
  if (streamNow || services.streams.closing.aborted) {
    return await openTaskStream(ctx, res, target);
  }
  // Shutdown waits until this request answered or primed its stream (then ends it), not for the stream's end.
  let primed: () => void = () => {};
  const decided = new Promise<void>((resolve) => {
    primed = resolve;
  });
  const answered = waitThenAnswer(ctx, res, pending, primed);
  services.streams.deciding(Promise.race([decided, answered]));
  return await answered;
}

async function waitThenAnswer(
  ctx: SessionContext,
  res: ServerResponse,
  pending: PendingResult,
  primed: () => void,
): Promise<void> {
  const wait = new ResultWait(ctx, res, pending.taskId);
  try {
    const decision = await wait.decide(ctx.services.options.resultStreamAfterMs);
    if (decision.kind === 'gone') return;
    if (decision.kind === 'stream') return await openTaskStream(ctx, res, { kind: 'result', ...pending }, primed);
    auditRetrieval(ctx.logger, decision.read.task);
    writeJson(res, resultMessage(pending.rpcId, terminalOutcome(decision.read.task, decision.read.outcome)));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    if (!res.headersSent) writeJson(res, errorResponse(pending.rpcId, toJsonRpcError(error)));
  } finally {
    primed();
    // Kept until the stream (if any) ended: its own subscriptions of the same channels then cost no command.
    await wait.release();
  }
}

function writeJson(res: ServerResponse, message: Record<string, unknown>): void {
  res.setHeader('content-type', 'application/json');
  res.end(JSON.stringify(message));
}

/** One tasks/result's wait in the process: its two channel listeners and what ends it. */
class ResultWait {
  readonly #ctx: SessionContext;
  readonly #res: ServerResponse;
  readonly #taskId: string;
  readonly #unsubscribes: (() => Promise<void>)[] = [];
  #settle: (decision: Decision | Ended) => void = () => {};

  constructor(ctx: SessionContext, res: ServerResponse, taskId: string) {
    this.#ctx = ctx;
    this.#res = res;
    this.#taskId = taskId;
  }

  /** A message on the task's channel: its end, or a request for input (carried by a stream). */
  readonly #onTaskChange = (message: string): void => {
    const fields = fieldsOf(message);
    const status = fields?.status as TaskStatus | undefined;
    if (status === 'input_required') this.#settle({ kind: 'stream' });
    else if (fields !== undefined && status !== undefined && isTerminalStatus(status)) {
      this.#settle({ kind: 'ended', fields, outcome: carriedOutcome(fields.outcome) });
    }
  };

  readonly #onOutbox = (): void => this.#settle({ kind: 'stream' });

  async decide(waitMs: number): Promise<Decision> {
    const { services, owner } = this.#ctx;
    const ended = new Promise<Decision | Ended>((resolve) => {
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
      // Both channels in one SUBSCRIBE; then one read (record, outcome and outbox), so nothing in between is missed.
      const subscribed = await Promise.all([
        services.bus.onTaskChange(this.#taskId, this.#onTaskChange),
        services.bus.onOutboxArrival(this.#taskId, this.#onOutbox),
      ]).catch(() => undefined);
      if (subscribed === undefined) return { kind: 'stream' };
      this.#unsubscribes.push(...subscribed);
      const read = await services.tasks.outcome(owner, this.#taskId, true);
      if (isTerminalStatus(read.task.status)) return { kind: 'answer', read };
      if (read.outbox === true || read.task.status === 'input_required') return { kind: 'stream' };
      const decision = await ended;
      if (decision.kind !== 'ended') return decision;
      // A finish's message carries its outcome (up to a size): the answer needs no read. The task was the
      // caller's at the read above, and a task's owner never changes.
      if (decision.outcome !== undefined) {
        const task = { ...read.task, ...recordFromFields(this.#taskId, decision.fields), ownerId: read.task.ownerId };
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
    await Promise.all(this.#unsubscribes.map((unsubscribe) => unsubscribe().catch(() => {})));
  }
}

/** The fields of a task channel message (a snapshot, and a finish's carried `outcome`), if it is one. */
function fieldsOf(message: string): (Record<string, string> & { outcome?: unknown }) | undefined {
  try {
    const fields = JSON.parse(message) as Record<string, string> & { outcome?: unknown };
    return typeof fields.status === 'string' ? fields : undefined;
  } catch {
    return undefined;
  }
}
