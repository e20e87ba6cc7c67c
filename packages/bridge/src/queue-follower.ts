import {
  type AdvanceReply,
  type BridgePositions,
  type BridgeStream,
  type ExistingQueue,
  type ExistingQueueEvent,
  errorMessage,
  type Logger,
  streamEntryTime,
} from '@taskgate/core';
import type { EventApplier } from './apply-event.js';
import type { BridgeMetrics } from './bridge-metrics.js';
import type { BridgedToolConfig } from './config.js';

/** Entries read per XREAD. */
const BATCH = 100;
/** Job ids read per state and page, and at most, when looking for jobs of tasks cancelled meanwhile. */
const WITHDRAW_PAGE = 500;
const WITHDRAW_SCAN_LIMIT = 10_000;

export interface FollowerOptions {
  readonly queue: ExistingQueue;
  /** The queue's position key: the config's connection name and `prefix:name`. */
  readonly stream: BridgeStream;
  /** The bridged tools of this queue, by name. */
  readonly tools: ReadonlyMap<string, BridgedToolConfig>;
  readonly positions: BridgePositions;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  readonly logger: Logger;
  /** This replica's name in the lease. */
  readonly holder: string;
  /** How long the lease lasts unless renewed (ms); a standby takes over this long after the holder died. */
  readonly leaseMs: number;
  /** How long one XREAD waits for an entry (ms); the lease is renewed at least this often. */
  readonly blockMs: number;
}

/** Stream ids `<ms>-<n>`: is `a` after `b`? */
function after(a: string, b: string): boolean {
  const [am = 0, an = 0] = a.split('-').map(Number);
  const [bm = 0, bn = 0] = b.split('-').map(Number);
  return am !== bm ? am > bm : an > bn;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * Follows one existing queue's event stream from the position stored in taskgate's Redis, while this
 * replica holds the queue's lease (the others stand by). Each entry is applied to the task whose id is the
 * job id, then the position moves past it: a finish is applied first and recorded after (a repeat after a
 * crash is refused, the task being terminal), progress is recorded first and applied after (never twice).
 * A position absent or older than the stream's first entry (BullMQ trims the stream) cannot be resumed:
 * the follower starts at the stream's end and asks the running executions to reconcile by job state.
 */
export class QueueFollower {
  readonly #options: FollowerOptions;
  readonly #reconcilers = new Set<() => void>();
  readonly #label: { queue: string };
  /** The last applied entry while this replica holds the lease; undefined while it stands by. */
  #position: string | undefined;
  /** The last entry read that concerned no task, not recorded yet. */
  #unrecorded: string | undefined;
  #closed = false;
  #loop: Promise<void> | undefined;
  #skippedUntilMs = 0;

  constructor(options: FollowerOptions) {
    this.#options = options;
    this.#label = { queue: options.stream.queue };
  }

  /**
   * When this follower last could not resume its position: the time (ms) of the stream entry it restarted
   * from. Jobs that finished before then had their events skipped here: their executions reconcile by state.
   */
  get skippedUntilMs(): number {
    return this.#skippedUntilMs;
  }

  /** Calls `reconcile` each time the position could not be resumed, until the returned function is called. */
  onFallback(reconcile: () => void): () => void {
    this.#reconcilers.add(reconcile);
    return () => this.#reconcilers.delete(reconcile);
  }

  /** Starts following; resolves after the first round (the lease taken and the position settled, or not held). */
  async start(): Promise<void> {
    const first = await this.#guarded();
    this.#loop = (async () => {
      if (!first) await sleep(1000);
      // A round that failed because the bridge is closing (its connections dropped) ends the loop at once.
      while (!this.#closed) if (!(await this.#guarded()) && !this.#closed) await sleep(1000);
    })();
  }

  /** One round; false when it failed (logged; the next round starts from the stored position). */
  async #guarded(): Promise<boolean> {
    try {
      await this.#round();
      return true;
    } catch (error) {
      this.#position = undefined;
      this.#unrecorded = undefined;
      this.#options.logger.warn(
        { queue: this.#label.queue, err: errorMessage(error) },
        'following the event stream failed; retrying',
      );
      return false;
    }
  }

  async #round(): Promise<void> {
    const { positions, stream, holder, leaseMs, queue } = this.#options;
    const stored = await positions.hold(stream, holder, leaseMs);
    if (stored === undefined) {
      this.#standBy();
      await sleep(Math.max(50, Math.floor(leaseMs / 4)));
      return;
    }
    if (this.#position === undefined) {
      this.#position = await this.#resume(stored);
      await this.#withdrawCancelled();
    } else if (stored !== '' && after(stored, this.#position)) this.#position = stored;
    if (this.#closed) return;
    const events = await queue.readEvents(this.#position, BATCH, this.#options.blockMs);
    for (const event of events) {
      if (this.#closed || !(await this.#applyOne(event))) return;
      this.#position = event.id;
    }
    if (this.#unrecorded !== undefined && (await this.#record(this.#unrecorded)) === 'not-held') return;
    const { last } = await queue.eventStreamEnds();
    const lagMs = last === undefined ? 0 : streamEntryTime(last) - streamEntryTime(this.#position);
    this.#options.metrics.eventLag.set(this.#label, Math.max(0, lagMs) / 1000);
  }

  /** Where to read from after taking the lease: the stored position, or the stream's end (and reconcile). */
  async #resume(stored: string): Promise<string> {
    const { queue, positions, stream, holder, leaseMs, logger } = this.#options;
    const ends = await queue.eventStreamEnds();
    // Intact: the stored entry (or an older one) is still there, or nothing was ever removed from the stream
    // (a position stored while the stream was empty, `0-0`, then covers everything added since).
    const intact = stored !== '' && (ends.removed === 0 || (ends.first !== undefined && !after(ends.first, stored)));
    if (intact) {
      logger.info({ queue: stream.queue, position: stored }, 'following the event stream from its stored position');
      return stored;
    }
    const start = ends.last ?? '0-0';
    logger.warn(
      { queue: stream.queue, position: stored === '' ? 'none' : stored, first: ends.first ?? 'none' },
      'no usable position in the event stream (never stored, or trimmed away): working tasks reconcile by job state',
    );
    // Stored at once, even for an empty stream: a bridge killed before it applied anything resumes from here.
    await positions.advance(stream, holder, leaseMs, start);
    this.#skippedUntilMs = Math.max(this.#skippedUntilMs, start === '0-0' ? Date.now() : streamEntryTime(start));
    for (const reconcile of [...this.#reconcilers]) reconcile();
    return start;
  }

  /**
   * Taking the lease over: removes the not-started jobs of tasks cancelled while no bridge ran (a cancel
   * removes the bridge's own job of a task that waits for a bridge, so no execution would remove them).
   */
  async #withdrawCancelled(): Promise<void> {
    const { queue, applier, tools, logger, stream } = this.#options;
    let removed = 0;
    for (let start = 0; start < WITHDRAW_SCAN_LIMIT; start += WITHDRAW_PAGE) {
      const ids = [...new Set(await queue.notStartedJobIds(start, WITHDRAW_PAGE))];
      if (ids.length === 0) break;
      for (const id of await applier.cancelledOf(ids, tools)) if (await queue.removeIfWaiting(id)) removed += 1;
    }
    if (removed > 0) logger.info({ queue: stream.queue, removed }, 'jobs of tasks cancelled meanwhile removed');
  }

  /**
   * Applies one entry; false when the lease was lost (another replica applies from here). An entry about no
   * working bridged task is only recorded with the next one that is (or at the end of the batch).
   */
  async #applyOne(event: ExistingQueueEvent): Promise<boolean> {
    const { applier, tools } = this.#options;
    const task = await applier.taskOf(event, tools);
    if (task === undefined) {
      this.#unrecorded = event.id;
      return true;
    }
    const finishes = event.kind === 'completed' || event.kind === 'failed' || event.kind === 'removed';
    if (finishes) await applier.apply(event, task);
    const recorded = await this.#record(event.id);
    if (recorded === 'not-held') return false;
    if (!finishes && recorded === 'advanced') await applier.apply(event, task);
    return true;
  }

  /** Moves the stored position to `entryId`; on 'not-held' this replica stands by from now on. */
  async #record(entryId: string): Promise<AdvanceReply> {
    const { positions, stream, holder, leaseMs } = this.#options;
    this.#unrecorded = undefined;
    const recorded = await positions.advance(stream, holder, leaseMs, entryId);
    if (recorded === 'not-held') this.#standBy();
    return recorded;
  }

  #standBy(): void {
    if (this.#position !== undefined)
      this.#options.logger.info({ queue: this.#label.queue }, 'event stream lease lost');
    this.#position = undefined;
    this.#unrecorded = undefined;
    this.#options.metrics.eventLag.remove(this.#label);
  }

  /** Stops following and lets the lease lapse now, so a standby replica takes over at once. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.#loop;
    if (this.#position !== undefined) {
      await this.#options.positions.release(this.#options.stream, this.#options.holder).catch(() => {});
    }
  }
}
