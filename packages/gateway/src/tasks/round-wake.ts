import type { TaskFollower, TaskWaiter } from '@taskgate/core';

/**
 * What wakes a loop that waits on a running task and reads it again when woken (the input rounds of
 * 2026-07-28): the task follower (every change of the task, its end, and "read again" after the subscriber
 * reconnected, and every arrival in the task's outbox: input requests, progress, logs), and the request's
 * abort. A wake that comes while the loop is reading is kept for its next `next()`. One object per waiting
 * request: the follower's waiter and the signal's listener at once.
 */
export class RoundWake implements TaskWaiter {
  /** The loop reads the task once `start` resolved: the follower makes no read of its own for it. */
  readonly readsOnceLive = true;
  readonly #follower: TaskFollower;
  readonly #taskId: string;
  readonly #signal: AbortSignal;
  #woken = false;
  #resolve: (() => void) | undefined;
  #timer: NodeJS.Timeout | undefined;
  #following = false;

  constructor(follower: TaskFollower, taskId: string, signal: AbortSignal) {
    this.#follower = follower;
    this.#taskId = taskId;
    this.#signal = signal;
  }

  /**
   * Follows the task (its changes and its outbox's arrivals, on one channel); resolves once its subscription is
   * live, so a read after it misses no change.
   */
  async start(): Promise<void> {
    this.#signal.addEventListener('abort', this, { once: true });
    this.#following = true;
    this.#follower.follow(this.#taskId, this);
    await this.#follower.live(this.#taskId);
  }

  /**
   * Resolves at the next wake (at once when one came since the last call). With `ms`, also once that long
   * passed with none (a deadline, or a quiet period after an arrival).
   */
  next(ms?: number): Promise<void> {
    if (this.#woken || this.#signal.aborted) {
      this.#woken = false;
      return Promise.resolve();
    }
    return new Promise<void>((resolve) => {
      this.#resolve = resolve;
      if (ms !== undefined) this.#timer = setTimeout(() => this.#wake(), Math.max(0, ms));
    }).then(() => {
      this.#woken = false;
    });
  }

  /** Ends the follow and the signal's listener. */
  async stop(): Promise<void> {
    this.#signal.removeEventListener('abort', this);
    clearTimeout(this.#timer);
    if (this.#following) this.#follower.unfollow(this.#taskId, this);
    this.#following = false;
  }

  taskEnded(): void {
    this.#following = false;
    this.#wake();
  }

  taskChanged(): void {
    this.#wake();
  }

  /** The request was aborted. */
  handleEvent(): void {
    this.#wake();
  }

  /** An arrival in the task's outbox (input requests, progress, logs). */
  outboxArrived(): void {
    this.#wake();
  }

  #wake(): void {
    this.#woken = true;
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const resolve = this.#resolve;
    this.#resolve = undefined;
    resolve?.();
  }
}
