import { isTerminalStatus } from '@taskgate/protocol';
import type { EventBus } from '../redis/event-bus.js';
import { Follow, SUBSCRIBED, type TaskEnd, type TaskWaiter, type WaitOutcome } from './task-follow.js';
import { decodeTaskMessage, outboxArrivalOf } from './task-message.js';
import type { TaskStore } from './task-store.js';

export interface TaskWaitOptions {
  /** Ends the wait with `aborted` (the client went away, the gateway shuts down). */
  readonly signal: AbortSignal;
}

export interface TaskFollowerOptions {
  readonly bus: EventBus;
  /** Reads the followed tasks (one at a time, or the status of many in one round trip). */
  readonly store: TaskStore;
  /** Every followed task is re-read once per this interval (ms), a slice of them each second. Default 5 min. */
  readonly safetyMs?: number;
}

const ABORTED: WaitOutcome = { kind: 'aborted' };
const NOTHING = (): void => {};
const GONE: TaskEnd = { kind: 'gone' };
/** Tasks per pipeline of a safety re-read. */
const BATCH = 1000;
/**
 * Delay of the re-read that follows a failed subscription or read (Redis away): not the full safety interval.
 * This is the safety net, not a poll: it runs only after a failure, once, for every followed task at once.
 */
const RETRY_MS = 1000;
/** The safety re-read's tick: each one re-reads its share of the followed tasks (at most the safety interval). */
const TICK_MS = 1000;
/** The default safety interval (see `TaskFollowerOptions.safetyMs`). */
const DEFAULT_SAFETY_MS = 5 * 60 * 1000;
/** A waiter that does not read the task itself once its follow is live: a new follow reads it. */
const READS_NOT = (waiter: TaskWaiter): boolean => waiter.readsOnceLive !== true;

/** One `untilTerminal` call: its signal's abort listener itself (`handleEvent`), so no closure per wait. */
class PromisedWait implements TaskWaiter {
  readonly #follower: TaskFollower;
  readonly #taskId: string;
  readonly #signal: AbortSignal;
  readonly #resolve: (outcome: WaitOutcome) => void;

  constructor(follower: TaskFollower, taskId: string, signal: AbortSignal, resolve: (outcome: WaitOutcome) => void) {
    this.#follower = follower;
    this.#taskId = taskId;
    this.#signal = signal;
    this.#resolve = resolve;
  }

  taskEnded(end: TaskEnd): void {
    this.#signal.removeEventListener('abort', this);
    this.#resolve(end);
  }

  handleEvent(): void {
    this.#follower.unfollow(this.#taskId, this);
    this.#resolve(ABORTED);
  }
}

/**
 * Follows tasks for the requests that wait on them, through the process's one EventBus: one subscription of
 * a task's channel per process, however many requests wait on the task (tasks/result, direct calls, reads,
 * inline answers, the input rounds and listen streams of 2026-07-28), each woken from its messages (decoded
 * once, by `decodeTaskMessage`): the task's changes, and the arrivals in its outbox (the same channel, in
 * order). A new follow subscribes first, then re-reads (so no change between the caller's read and the
 * subscription is lost), unless each of its waiters reads the task itself once live (`readsOnceLive`).
 *
 * Pub/sub loses nothing on a live connection, and a reconnect re-reads every followed task at once. As a last
 * safety net (a task's expiry publishes nothing), one timer for the whole process re-reads the status of every
 * followed task once per `safetyMs` (default 5 min), one HGET per task: each second re-reads the next
 * `followed × 1 s / safetyMs` of them in turn, so 10,000 idle waiters cost about 33 reads a second, spread
 * evenly — not a timer and a read per waiter every poll interval.
 */
export class TaskFollower {
  readonly #bus: EventBus;
  readonly #store: TaskStore;
  readonly #safetyMs: number;
  readonly #follows = new Map<string, Follow>();
  #timer: NodeJS.Timeout | undefined;
  #retry: NodeJS.Timeout | undefined;
  #sweeping = false;
  #again = false;
  /**
   * The safety re-read's round: where it stands in the follows (a Map iterator also reaches those added after
   * it started), how many are left ahead of it at most, and when it must be done.
   */
  #round: { iterator: Iterator<Follow> | undefined; ahead: number; endsAt: number } = {
    iterator: undefined,
    ahead: 0,
    endsAt: 0,
  };
  #rollingBusy = false;
  readonly #onMessage = (follow: Follow, message: string): void => this.#message(follow, message);

  constructor(options: TaskFollowerOptions) {
    this.#bus = options.bus;
    this.#store = options.store;
    this.#safetyMs = options.safetyMs ?? DEFAULT_SAFETY_MS;
    this.#bus.onReconnect(() => void this.sweep(true));
  }

  /** Number of tasks followed now. */
  get followed(): number {
    return this.#follows.size;
  }

  /**
   * Registers `waiter` on the task: it is told of the task's end (then forgotten) and, when it has
   * `taskChanged`, of its other changes, until `unfollow`. A task followed already shares its subscription;
   * a new one subscribes, then re-reads and tells its waiters what it found.
   */
  follow(taskId: string, waiter: TaskWaiter): void {
    let follow = this.#follows.get(taskId);
    const fresh = follow === undefined;
    if (follow === undefined) {
      follow = new Follow(taskId, this.#onMessage);
      this.#follows.set(taskId, follow);
    }
    follow.add(waiter);
    // A follow that exists already is subscribed (or about to be, and re-reads then): any change after the
    // caller's read reaches it.
    if (fresh) {
      // A round under way reaches it too (it joins the Map's end).
      if (this.#round.iterator !== undefined) this.#round.ahead += 1;
      this.#subscribe(follow);
    }
    this.#startTimer();
  }

  /**
   * Settles once the task's channel is subscribed for its followers (at once when it is not followed), so a
   * read after it misses no change and no outbox arrival; rejects as the SUBSCRIBE did when it failed.
   */
  live(taskId: string): Promise<void> {
    return this.#follows.get(taskId)?.subscribed ?? Promise.resolve();
  }

  /** Forgets `waiter` (idempotent); the task's subscription ends with its last waiter. */
  unfollow(taskId: string, waiter: TaskWaiter): void {
    const follow = this.#follows.get(taskId);
    if (follow === undefined || !follow.remove(waiter)) return;
    if (follow.waiters.length === 0) this.#release(follow);
  }

  /** Resolves once the task is terminal, gone (expired), or the wait was aborted. Never rejects. */
  untilTerminal(taskId: string, options: TaskWaitOptions): Promise<WaitOutcome> {
    const { signal } = options;
    if (signal.aborted) return Promise.resolve(ABORTED);
    return new Promise<WaitOutcome>((resolve) => {
      const wait = new PromisedWait(this, taskId, signal, resolve);
      signal.addEventListener('abort', wait, { once: true });
      this.follow(taskId, wait);
    });
  }

  /**
   * Re-reads every followed task now (after a reconnect of the subscriber, or a failed read), and subscribes
   * again the follows whose subscription failed; `missed`: messages may have been lost, so the waiters that
   * follow changes are told to read again. Resolves when done; never rejects.
   */
  async sweep(missed = false): Promise<void> {
    if (missed) for (const follow of [...this.#follows.values()]) follow.changed(undefined);
    if (this.#sweeping) {
      // A sweep under way may have read before whatever asks for this one (a reconnect): one more follows.
      this.#again = true;
      return;
    }
    this.#sweeping = true;
    try {
      do {
        this.#again = false;
        const follows = [...this.#follows.values()];
        for (const follow of follows) if (follow.subscription === 'failed') this.#subscribe(follow);
        for (let i = 0; i < follows.length; i += BATCH) await this.#rereadStatus(follows.slice(i, i + BATCH));
      } while (this.#again);
    } catch {
      // Redis unavailable: tried again soon.
      this.#retrySoon();
    } finally {
      this.#sweeping = false;
    }
  }

  #subscribe(follow: Follow): void {
    follow.subscription = 'pending';
    const subscribing = this.#bus.onTaskChange(follow.taskId, follow.listener);
    // What `live` gives: no value kept (the unsubscribe function), a rejection seen here (never unhandled).
    follow.subscribed = subscribing.then(NOTHING);
    follow.subscribed.catch(NOTHING);
    subscribing.then(
      () => {
        // Ended by `offTaskChange` (no function kept per follow).
        if (follow.released) return void this.#bus.offTaskChange(follow.taskId, follow.listener);
        follow.subscription = 'live';
        follow.subscribed = SUBSCRIBED;
        // Read for the waiters that do not read the task themselves once live (none: no read).
        if (follow.waiters.some(READS_NOT)) this.#reread(follow, true);
      },
      () => {
        // No subscription (the bus is closing, or Redis is away): re-read now, and subscribe again soon.
        follow.subscription = 'failed';
        this.#reread(follow, true);
        this.#retrySoon();
      },
    );
  }

  /** One follow's full re-read; `tell`: its waiters that follow changes hear of a task still running too. */
  #reread(follow: Follow, tell: boolean): void {
    if (follow.released) return;
    this.#store.read(follow.taskId).then(
      (record) => {
        if (follow.released) return;
        if (record === undefined) this.#end(follow, GONE);
        else if (isTerminalStatus(record.status)) this.#end(follow, { kind: 'terminal', task: record });
        else if (tell) follow.changed({ task: record, terminal: false });
      },
      () => {
        if (tell) follow.changed(undefined);
        this.#retrySoon();
      },
    );
  }

  /**
   * A sweep in `RETRY_MS`, after a subscription or a read failed: a change the follow missed meanwhile would
   * otherwise wait for the safety interval (or a reconnect of the subscriber, which may have come before).
   */
  #retrySoon(): void {
    if (this.#retry !== undefined || this.#follows.size === 0) return;
    this.#retry = setTimeout(() => {
      this.#retry = undefined;
      void this.sweep();
    }, RETRY_MS);
    this.#retry.unref();
  }

  /** The status of many followed tasks in one pipeline; a full read only of those that ended. */
  async #rereadStatus(follows: readonly Follow[]): Promise<void> {
    const statuses = await this.#store.statuses(follows.map((follow) => follow.taskId));
    follows.forEach((follow, i) => {
      const status = statuses[i];
      if (status === undefined || follow.released) return;
      if (status === null || isTerminalStatus(status)) this.#reread(follow, false);
    });
  }

  #message(follow: Follow, message: string): void {
    if (follow.released) return;
    const arrival = outboxArrivalOf(message);
    if (arrival !== undefined) {
      follow.arrived(arrival);
      return;
    }
    const change = decodeTaskMessage(follow.taskId, message);
    if (change === undefined) {
      this.#reread(follow, true);
      return;
    }
    if (!change.terminal) {
      follow.changed(change);
      return;
    }
    this.#end(
      follow,
      change.outcome === undefined
        ? { kind: 'terminal', task: change.task, announced: true }
        : { kind: 'terminal', task: change.task, announced: true, outcome: change.outcome },
    );
  }

  /** The task ended: out of the map first (a waiter may follow it again from its callback), then told. */
  #end(follow: Follow, end: TaskEnd): void {
    this.#release(follow);
    follow.end(end);
  }

  #release(follow: Follow): void {
    if (follow.released) return;
    follow.released = true;
    if (this.#follows.get(follow.taskId) === follow) this.#follows.delete(follow.taskId);
    if (follow.subscription === 'live') void this.#bus.offTaskChange(follow.taskId, follow.listener);
    if (this.#follows.size > 0) return;
    if (this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
      this.#round = { iterator: undefined, ahead: 0, endsAt: 0 };
    }
    if (this.#retry !== undefined) {
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
   * One tick of the safety re-read: the next share of this round's follows. A round walks the follows (those
   * added meanwhile included) in `safetyMs`: each tick reads what is left ahead of it (counted at the start,
   * plus the follows added since, minus those read) divided by the ticks left, so every follow is read within
   * the interval, however many come and go.
   */
  async #roll(tickMs: number): Promise<void> {
    if (this.#rollingBusy || this.#follows.size === 0) return;
    this.#rollingBusy = true;
    try {
      const now = Date.now();
      if (this.#round.iterator === undefined) {
        // A round that read every follow early waits for its end: a few follows are not read every tick.
        if (now < this.#round.endsAt) return;
        this.#round = { iterator: this.#follows.values(), ahead: this.#follows.size, endsAt: now + this.#safetyMs };
      }
      const round = this.#round;
      const ticksLeft = Math.max(1, Math.round((round.endsAt - now) / tickMs));
      const share = Math.max(1, Math.ceil(round.ahead / ticksLeft));
      const slice: Follow[] = [];
      while (slice.length < share) {
        const next = round.iterator?.next();
        if (next === undefined || next.done === true) {
          round.iterator = undefined;
          break;
        }
        if (!next.value.released) slice.push(next.value);
      }
      round.ahead = Math.max(0, round.ahead - slice.length);
      for (const follow of slice) if (follow.subscription === 'failed') this.#subscribe(follow);
      for (let i = 0; i < slice.length; i += BATCH) await this.#rereadStatus(slice.slice(i, i + BATCH));
    } catch {
      this.#retrySoon();
    } finally {
      this.#rollingBusy = false;
    }
  }
}
