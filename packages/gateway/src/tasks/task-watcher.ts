import { type EventBus, recordFromFields, type StoredResult, type TaskRecord, type TaskStore } from '@taskgate/core';
import { isTerminalStatus } from '@taskgate/protocol';

/** How waiting for a task ended. */
export type WatchOutcome =
  | {
      readonly kind: 'terminal';
      readonly task: TaskRecord;
      /**
       * Learnt from the task channel's message (not from a re-read): every message published before it, such
       * as an outbox arrival's, reached this process's subscriber first.
       */
      readonly announced?: true;
      /**
       * The stored outcome, when the message carried it (a finish's message does, up to a size): the same as
       * a read of the task would give, with no read. Absent: read it.
       */
      readonly outcome?: StoredResult;
    }
  | { readonly kind: 'gone' }
  | { readonly kind: 'aborted' };

export interface WatchOptions {
  /** Ends the wait with `aborted` (the client went away, the gateway shuts down). */
  readonly signal: AbortSignal;
}

export interface TaskWatcherOptions {
  readonly bus: EventBus;
  /** Reads the watched tasks (one at a time, or the status of many in one round trip). */
  readonly store: TaskStore;
  /** Every watched task is re-read once per this interval (ms), a slice of them each second. Default 5 min. */
  readonly safetyMs?: number;
}

const ABORTED: WatchOutcome = { kind: 'aborted' };
const GONE: WatchOutcome = { kind: 'gone' };
/** Tasks per pipeline of a safety re-read. */
const BATCH = 1000;
/** Delay of the re-read that follows a failed subscription or read (Redis away): not the full safety interval. */
const RETRY_MS = 1000;
/** The safety re-read's tick: each one re-reads its share of the watched tasks (at most the safety interval). */
const TICK_MS = 1000;
/** The default safety interval (see `TaskWatcherOptions.safetyMs`). */
export const DEFAULT_SAFETY_MS = 5 * 60 * 1000;

/** One `untilTerminal` call. It is its signal's abort listener itself (`handleEvent`): no closure per waiter. */
class Waiter {
  readonly watch: Watch;
  readonly signal: AbortSignal;
  readonly resolve: (outcome: WatchOutcome) => void;

  constructor(watch: Watch, signal: AbortSignal, resolve: (outcome: WatchOutcome) => void) {
    this.watch = watch;
    this.signal = signal;
    this.resolve = resolve;
  }

  handleEvent(): void {
    this.watch.settle(this, ABORTED);
  }
}

/** The waiters of one task, and the one channel subscription they share. */
class Watch {
  readonly taskId: string;
  /** Nearly always one: an array is smaller than a Set (made with its first waiter: an exact fit). */
  waiters: Waiter[] = [];
  /** Receives the task channel's messages (one function per watched task). */
  readonly listener: (message: string) => void;
  readonly #release: (watch: Watch) => void;
  /** `pending` until Redis confirmed the SUBSCRIBE; `failed`: subscribed again at the next sweep. */
  subscription: 'pending' | 'live' | 'failed' = 'pending';
  unsubscribe: (() => Promise<void>) | undefined;
  /** No waiter left: the watch is out of the watcher's map. */
  released = false;

  constructor(taskId: string, onMessage: (watch: Watch, message: string) => void, release: (watch: Watch) => void) {
    this.taskId = taskId;
    this.listener = (message) => onMessage(this, message);
    this.#release = release;
  }

  /** Adds a waiter: the first one makes an array of one, not one grown by `push` (room for 17). */
  add(waiter: Waiter): void {
    if (this.waiters.length === 0) this.waiters = [waiter];
    else this.waiters.push(waiter);
  }

  /** Ends one waiter's wait. */
  settle(waiter: Waiter, outcome: WatchOutcome): void {
    const index = this.waiters.indexOf(waiter);
    if (index < 0) return;
    this.waiters.splice(index, 1);
    waiter.signal.removeEventListener('abort', waiter);
    waiter.resolve(outcome);
    if (this.waiters.length === 0) this.#release(this);
  }

  /** Ends every waiter's wait. */
  settleAll(outcome: WatchOutcome): void {
    for (const waiter of [...this.waiters]) this.settle(waiter, outcome);
  }

  /** Settles the waiters when `record` says the task is over. */
  check(record: TaskRecord | undefined): void {
    if (record === undefined) this.settleAll(GONE);
    else if (isTerminalStatus(record.status)) this.settleAll({ kind: 'terminal', task: record });
  }

  /** Settles the waiters with the terminal task of a channel message, and the outcome it carried if any. */
  announce(record: TaskRecord, outcome: StoredResult | undefined): void {
    this.settleAll(
      outcome === undefined
        ? { kind: 'terminal', task: record, announced: true }
        : { kind: 'terminal', task: record, announced: true, outcome },
    );
  }
}

/**
 * Waits for tasks to turn terminal through the process's one EventBus: subscribe to the task's channel first,
 * then re-read (so no change between the caller's read and the subscription is lost). Many waiters on one
 * task share one watch and one subscription.
 *
 * Pub/sub loses nothing on a live connection, and a reconnect re-reads every watched task at once. As a last
 * safety net, one timer for the whole process re-reads the status of every watched task once per `safetyMs`
 * (default 5 min), one HGET per task: each second re-reads the next `watched × 1 s / safetyMs` of them in
 * turn, so 10,000 idle waiters cost about 33 reads a second, spread evenly, not 10,000 at once — and not a
 * timer and a full read per waiter every poll interval.
 */
export class TaskWatcher {
  readonly #bus: EventBus;
  readonly #store: TaskStore;
  readonly #safetyMs: number;
  readonly #watches = new Map<string, Watch>();
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #sweeping = false;
  #again = false;
  /**
   * The safety re-read's round: where it stands in the watches (a Map iterator also reaches those added after
   * it started), how many are left ahead of it at most, and when it must be done.
   */
  #round: { iterator: Iterator<Watch> | undefined; ahead: number; endsAt: number } = {
    iterator: undefined,
    ahead: 0,
    endsAt: 0,
  };
  #rollingBusy = false;
  readonly #onMessage = (watch: Watch, message: string): void => this.#message(watch, message);
  readonly #release = (watch: Watch): void => this.#unwatch(watch);

  constructor(options: TaskWatcherOptions) {
    this.#bus = options.bus;
    this.#store = options.store;
    this.#safetyMs = options.safetyMs ?? DEFAULT_SAFETY_MS;
    this.#bus.onReconnect(() => void this.sweep());
  }

  /** Number of tasks watched now. */
  get watched(): number {
    return this.#watches.size;
  }

  /** Resolves once the task is terminal, gone (expired), or the wait was aborted. Never rejects. */
  untilTerminal(taskId: string, options: WatchOptions): Promise<WatchOutcome> {
    const { signal } = options;
    if (signal.aborted) return Promise.resolve(ABORTED);
    return new Promise<WatchOutcome>((resolve) => {
      let watch = this.#watches.get(taskId);
      const fresh = watch === undefined;
      if (watch === undefined) {
        watch = new Watch(taskId, this.#onMessage, this.#release);
        this.#watches.set(taskId, watch);
      }
      const waiter = new Waiter(watch, signal, resolve);
      watch.add(waiter);
      signal.addEventListener('abort', waiter, { once: true });
      // A watch that exists already is subscribed (or about to be, and re-reads then): any change after the
      // caller's read reaches it. A new one subscribes, then re-reads.
      if (fresh) {
        // A round under way reaches it too (it joins the Map's end).
        if (this.#round.iterator !== undefined) this.#round.ahead += 1;
        this.#subscribe(watch);
      }
      this.#startTimer();
    });
  }

  /**
   * Re-reads every watched task now (after a reconnect of the subscriber, or a failed read), and subscribes
   * again the watches whose subscription failed. Resolves when done; never rejects.
   */
  async sweep(): Promise<void> {
    if (this.#sweeping) {
      // A sweep under way may have read before whatever asks for this one (a reconnect): one more follows.
      this.#again = true;
      return;
    }
    this.#sweeping = true;
    try {
      do {
        this.#again = false;
        const watches = [...this.#watches.values()];
        for (const watch of watches) if (watch.subscription === 'failed') this.#subscribe(watch);
        for (let i = 0; i < watches.length; i += BATCH) await this.#rereadStatus(watches.slice(i, i + BATCH));
      } while (this.#again);
    } catch {
      // Redis unavailable: tried again soon.
      this.#retrySoon();
    } finally {
      this.#sweeping = false;
    }
  }

  #subscribe(watch: Watch): void {
    watch.subscription = 'pending';
    this.#bus.onTaskChange(watch.taskId, watch.listener).then(
      (unsubscribe) => {
        if (watch.released) return void unsubscribe();
        watch.subscription = 'live';
        watch.unsubscribe = unsubscribe;
        this.#reread(watch);
      },
      () => {
        // No subscription (the bus is closing, or Redis is away): re-read now, and subscribe again soon.
        watch.subscription = 'failed';
        this.#reread(watch);
        this.#retrySoon();
      },
    );
  }

  /** One watch's full re-read. */
  #reread(watch: Watch): void {
    if (watch.released) return;
    this.#store.read(watch.taskId).then(
      (record) => watch.check(record),
      () => this.#retrySoon(),
    );
  }

  /**
   * A sweep in `RETRY_MS`, after a subscription or a read failed: a change the watch missed meanwhile would
   * otherwise wait for the safety interval (or a reconnect of the subscriber, which may have come before).
   */
  #retrySoon(): void {
    if (this.#retry !== undefined || this.#watches.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.sweep();
    }, RETRY_MS);
    this.#retry.unref();
  }

  /** The status of many watched tasks in one pipeline; a full read only of those that ended. */
  async #rereadStatus(watches: readonly Watch[]): Promise<void> {
    const statuses = await this.#store.statuses(watches.map((watch) => watch.taskId));
    watches.forEach((watch, i) => {
      const status = statuses[i];
      if (status === undefined || watch.released) return;
      if (status === null || isTerminalStatus(status)) this.#reread(watch);
    });
  }

  #message(watch: Watch, message: string): void {
    try {
      const fields = JSON.parse(message) as Record<string, string> & { outcome?: unknown };
      if (fields.status !== undefined && isTerminalStatus(fields.status as TaskRecord['status'])) {
        watch.announce(recordFromFields(watch.taskId, fields), carriedOutcome(fields.outcome));
      }
    } catch {
      this.#reread(watch);
    }
  }

  #unwatch(watch: Watch): void {
    watch.released = true;
    if (this.#watches.get(watch.taskId) === watch) this.#watches.delete(watch.taskId);
    void watch.unsubscribe?.();
    if (this.#watches.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#round = { iterator: undefined, ahead: 0, endsAt: 0 };
    }
    if (this.#watches.size === 0 && this.#retry !== undefined) {
      clearTimeout(this.#retry);
      this.#retry = undefined;
    }
  }

  #startTimer(): void {
    if (this.#timer !== undefined) return;
    const tickMs = Math.min(TICK_MS, this.#safetyMs);
    this.#timer = setInterval(() => void this.#roll(tickMs), tickMs);
    this.#timer.unref();
  }

  /**
   * One tick of the safety re-read: the next share of this round's watches. A round walks the watches (those
   * added meanwhile included) in `safetyMs`: each tick reads what is left ahead of it (counted at the start,
   * plus the watches added since, minus those read) divided by the ticks left, so every watch is read within
   * the interval, however many come and go.
   */
  async #roll(tickMs: number): Promise<void> {
    if (this.#rollingBusy || this.#watches.size === 0) return;
    this.#rollingBusy = true;
    try {
      const now = Date.now();
      if (this.#round.iterator === undefined) this.#startRound(now);
      const round = this.#round;
      const ticksLeft = Math.max(1, Math.round((round.endsAt - now) / tickMs));
      const share = Math.max(1, Math.ceil(round.ahead / ticksLeft));
      const slice: Watch[] = [];
      while (slice.length < share) {
        const next = round.iterator?.next();
        if (next === undefined || next.done === true) {
          round.iterator = undefined;
          break;
        }
        if (!next.value.released) slice.push(next.value);
      }
      round.ahead = Math.max(0, round.ahead - slice.length);
      for (const watch of slice) if (watch.subscription === 'failed') this.#subscribe(watch);
      for (let i = 0; i < slice.length; i += BATCH) await this.#rereadStatus(slice.slice(i, i + BATCH));
    } catch {
      this.#retrySoon();
    } finally {
      this.#rollingBusy = false;
    }
  }

  #startRound(now: number): void {
    this.#round = { iterator: this.#watches.values(), ahead: this.#watches.size, endsAt: now + this.#safetyMs };
  }
}

/** The outcome a finish's message carried: `{ result }` or `{ error }`, or undefined (none, or not one). */
export function carriedOutcome(value: unknown): StoredResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const outcome = value as Record<string, unknown>;
  const part = outcome.result ?? outcome.error;
  return typeof part === 'object' && part !== null ? (value as StoredResult) : undefined;
}
