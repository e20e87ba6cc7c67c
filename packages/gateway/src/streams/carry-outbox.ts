import {
  errorMessage,
  type OutboxEntry,
  type StoredTask,
  type TaskChange,
  type TaskWaiter,
  toTask,
} from '@taskgate/core';
import { type OutboxRendering, outboxMessage } from '../messages/outbox-messages.js';
import { HELD_LEASE_MS } from './connect-stream.js';
import type { LoggedStream } from './logged-stream.js';
import { OutboxRelay } from './outbox-relay.js';
import type { SessionContext } from './stream-context.js';
import type { StreamPart } from './stream-part.js';

/** A stream's hold on a task's outbox. */
export interface OutboxCarrier {
  /**
   * Delivers everything appended so far, if this stream carries the task (call it once the task is terminal).
   * `announced`: the end was learnt from the task channel, after every arrival announced before it, so an
   * outbox that had no arrival is not looked at again (unless the subscriber reconnected meanwhile).
   */
  drain(announced?: boolean): Promise<void>;
}

/**
 * Makes `stream` the carrier of the task's outbox while it is open: it claims the task's carrier lease
 * ("a tasks/result stream is open for this task", visible to every pod) and refreshes it at heartbeats, or
 * keeps trying while another stream holds it; relays the outbox on every announcement; and gives the lease
 * up when the connection ends, which hands what is left to the session's GET stream (INP-5).
 *
 * A tasks/result stream that becomes the carrier first re-sends the task's pending input requests whose
 * stream is gone (`resend`, INP-3): delivered at least once, whatever happened to earlier streams.
 *
 * Most tasks never put anything in their outbox: one EXISTS when the lease is claimed tells, and until an
 * arrival is announced the stream reads nothing more (no relay cursor, no range, no session log level).
 */
export async function carryOutbox(
  ctx: SessionContext,
  stream: LoggedStream,
  task: StoredTask,
  kind: 'result' | 'direct',
): Promise<OutboxCarrier> {
  const carrier = new Carrier(ctx, stream, task, kind);
  await carrier.start();
  return carrier;
}

/**
 * One stream's hold on one task's outbox (see `carryOutbox`); the stream's part for its heartbeats and end, and
 * a waiter of the task follower, which tells it of the outbox's arrivals (announced on the task's channel).
 */
class Carrier implements OutboxCarrier, StreamPart, TaskWaiter {
  readonly #ctx: SessionContext;
  readonly #stream: LoggedStream;
  readonly #task: StoredTask;
  readonly #kind: 'result' | 'direct';
  /** Created at the first entry to relay. */
  #relay: OutboxRelay | undefined;
  #carrying = false;
  #claiming: Promise<boolean> | undefined;
  /** The outbox is known to hold entries (it never shrinks while the task lives). */
  #nonEmpty = false;
  /** Followed through the task follower (until the task's end, or the connection's). */
  #following = false;
  #closed = false;
  /** The subscriber reconnected while this stream was open: announcements may have been lost. */
  #reconnected = false;

  constructor(ctx: SessionContext, stream: LoggedStream, task: StoredTask, kind: 'result' | 'direct') {
    this.#ctx = ctx;
    this.#stream = stream;
    this.#task = task;
    this.#kind = kind;
  }

  /** An arrival was announced on the task's channel. */
  outboxArrived(): void {
    this.#nonEmpty = true;
    this.#run(false);
  }

  /** Only "read again" matters here: the subscriber reconnected, and announcements may have been lost meanwhile. */
  taskChanged(change: TaskChange | undefined): void {
    if (change !== undefined) return;
    this.#reconnected = true;
    this.#run(true);
  }

  /** The task ended (its stream acts on it, and drains the outbox): no longer followed. */
  taskEnded(): void {
    this.#following = false;
  }

  async start(): Promise<void> {
    const { follower } = this.#ctx.services;
    // Followed before the first pass, so no announcement between the two is lost.
    this.#following = true;
    follower.follow(this.#task.taskId, this);
    try {
      await follower.live(this.#task.taskId);
    } catch (error) {
      this.#unfollow();
      throw error;
    }
    this.#stream.attach(this);
    // The connection may have ended while we subscribed, its clean-ups run already.
    if (!this.#stream.isOpen) return this.close();
    await this.#pump(false);
  }

  drain(announced = false): Promise<void> {
    return this.#pump(!announced || this.#reconnected);
  }

  #run(recheck: boolean): void {
    this.#pump(recheck).catch((error: unknown) =>
      this.#ctx.logger.warn({ taskId: this.#task.taskId, err: errorMessage(error) }, 'outbox relay failed'),
    );
  }

  /**
   * Claims the lease if need be, then relays what the outbox holds after the cursor. `recheck`: look at the
   * outbox again even though it was empty (after a reconnect, or for the final drain).
   */
  async #pump(recheck: boolean): Promise<void> {
    if (!this.#stream.isOpen) return;
    if (!this.#carrying) {
      if (!(await this.#claim())) return;
    } else if (recheck && !this.#nonEmpty) {
      await this.#lookAtOutbox();
    }
    if (!this.#nonEmpty) return;
    this.#relay ??= new OutboxRelay(this.#ctx.services.outbox, this.#ctx.services.delivery, this.#stream, {
      taskId: this.#task.taskId,
      mode: 'carrier',
      expiresAt: this.#task.createdAt + this.#task.ttl,
      rendering: (entries) => this.#rendering(entries),
      ...(this.#kind === 'result' && { beforeRequest: () => emitInputRequired(this.#ctx, this.#stream, this.#task) }),
    });
    if ((await this.#relay.pump()) === 'not_carrier') this.#carrying = false;
  }

  #claim(): Promise<boolean> {
    this.#claiming ??= this.#claimNow().finally(() => {
      this.#claiming = undefined;
    });
    return this.#claiming;
  }

  async #claimNow(): Promise<boolean> {
    const { services } = this.#ctx;
    const { taskId } = this.#task;
    const result = await services.delivery.claim(
      taskId,
      this.#stream.streamId,
      this.#stream.connectionId,
      HELD_LEASE_MS,
    );
    if (result !== 'ok') return false;
    if (!this.#nonEmpty) await this.#lookAtOutbox();
    if (this.#kind === 'result' && this.#nonEmpty) {
      const rendering = (entries: readonly OutboxEntry[]) => this.#rendering(entries);
      await resendOrphans(this.#ctx, this.#stream, taskId, rendering, this.#task);
    }
    this.#carrying = true;
    return true;
  }

  async #lookAtOutbox(): Promise<void> {
    const { services } = this.#ctx;
    if (await services.outbox.hasEntries(this.#task.taskId)) this.#nonEmpty = true;
  }

  /**
   * How this stream renders the task's `entries`: the session's log level is read at every pass that has a
   * log message to filter (it may change), and only then.
   */
  async #rendering(entries: readonly OutboxEntry[]): Promise<OutboxRendering> {
    const { services, session } = this.#ctx;
    const logs = entries.some((entry) => entry.message.type === 'log');
    const logLevel = logs ? await services.sessions.logLevel(session.sessionId) : undefined;
    const { progressToken, taskId } = this.#task;
    return {
      ...(progressToken !== undefined && { progressToken }),
      ...(logLevel !== undefined && { logLevel }),
      ...(this.#kind === 'result' && { relatedTaskId: taskId }),
    };
  }

  /**
   * At a heartbeat, while carrying: extends the carrier lease and the stream's connection lease in one
   * script. Resolves to whether the connection still holds the stream; undefined when not carrying.
   */
  async refreshConnection(): Promise<boolean | undefined> {
    if (!this.#carrying) return undefined;
    const { services } = this.#ctx;
    const { streamId, connectionId } = this.#stream;
    const refreshed = await services.delivery.refresh(this.#task.taskId, streamId, connectionId, HELD_LEASE_MS);
    if (refreshed === 'fenced') return false;
    if (refreshed !== 'ok') this.#carrying = false;
    return true;
  }

  /** At a heartbeat, while not carrying: tries to become the carrier again. */
  async heartbeat(): Promise<void> {
    if (!this.#carrying) this.#run(false);
  }

  #unfollow(): void {
    if (this.#following) this.#ctx.services.follower.unfollow(this.#task.taskId, this);
    this.#following = false;
  }

  /** The connection ended: unfollows the task, and gives the carrier lease up unless the stream's end did. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#unfollow();
    // A stream that finished gave the lease up with its last event.
    if (this.#carrying && !this.#stream.released) {
      await this.#ctx.services.delivery.release(this.#task.taskId, this.#stream.streamId, this.#stream.connectionId);
    }
  }
}

/**
 * Sends the task's unanswered input requests again whose stream is gone (no connection carries it, and it
 * is not this stream): at least once, whatever happened to the stream that took them first. With `statusOf`,
 * the task's `input_required` status goes first.
 */
export async function resendOrphans(
  ctx: SessionContext,
  stream: LoggedStream,
  taskId: string,
  rendering: (entries: readonly OutboxEntry[]) => Promise<OutboxRendering>,
  statusOf?: StoredTask,
): Promise<void> {
  const { services } = ctx;
  const cursor = await services.delivery.cursor(taskId);
  if (cursor === '0-0') return;
  const sent = await services.outbox.range(taskId, '-', cursor);
  const orphans = await services.delivery.orphanedRequests(taskId, stream.streamId, sent);
  if (orphans.length === 0) return;
  const render = await rendering(orphans);
  // A tasks/result stream shows the status first (`statusOf`); a GET stream has it from the session's feed.
  if (statusOf?.kind === 'task' && !(await emitInputRequired(ctx, stream, statusOf))) return;
  for (const entry of orphans) {
    const message = outboxMessage(entry, render);
    if (message === undefined || entry.message.type !== 'request') continue;
    if (!(await stream.emit(message))) return;
    await services.delivery.recordSent(taskId, entry.message.requestId, stream.streamId);
    ctx.logger.debug({ taskId, requestId: entry.message.requestId }, 'input request sent again');
  }
}

/**
 * Emits the task's `notifications/tasks/status` on `stream` while the task waits for input, so that the
 * request that follows is never seen before the status it belongs to. False when the stream is gone.
 */
async function emitInputRequired(ctx: SessionContext, stream: LoggedStream, task: StoredTask): Promise<boolean> {
  const now = await ctx.services.tasks.read(task.taskId);
  if (now === undefined || now.status !== 'input_required') return stream.isOpen;
  return await stream.emit({ jsonrpc: '2.0', method: 'notifications/tasks/status', params: toTask(now) });
}
