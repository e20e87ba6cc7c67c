import type { EventBus, TaskStore } from '@taskgate/core';
import { errorMessage, type Logger } from '@taskgate/core';

/** How a watched task stopped needing its execution. */
export type WatchEnd = 'cancelled' | 'gone' | 'finished';

type Listener = (end: WatchEnd) => void;

function endOf(status: string | null | undefined): WatchEnd | undefined {
  if (status === null || status === undefined) return 'gone';
  if (status === 'cancelled') return 'cancelled';
  return status === 'completed' || status === 'failed' ? 'finished' : undefined;
}

/**
 * Tells running executions when their task ended under them (cancelled, expired, finished elsewhere).
 * Cancellations arrive on one channel for the whole process (one subscription, made once, not one per
 * job); because pub/sub is at-most-once, and expiry or a finish by another execution announce nothing
 * there, one timer per process also re-reads the status of every watched task (one pipelined round trip)
 * every `intervalMs` and after each reconnect of the subscriber.
 */
export class TaskWatch {
  readonly #watched = new Map<string, Set<Listener>>();
  readonly #store: TaskStore;
  readonly #bus: EventBus;
  readonly #intervalMs: number;
  readonly #logger: Logger;
  readonly #offReconnect: () => void;
  #timer: NodeJS.Timeout | undefined;
  #subscription: Promise<unknown> | undefined;

  constructor(options: { store: TaskStore; bus: EventBus; intervalMs: number; logger: Logger }) {
    this.#store = options.store;
    this.#bus = options.bus;
    this.#intervalMs = options.intervalMs;
    this.#logger = options.logger;
    this.#offReconnect = this.#bus.onReconnect(() => void this.checkNow());
  }

  /** Number of tasks watched now. */
  get size(): number {
    return this.#watched.size;
  }

  /**
   * Calls `onEnd` (at most once) when the task is cancelled, gone or finished. Resolves once the process's
   * subscription to cancellations is live: a cancellation after that reaches `onEnd`, so a caller that
   * watches before it reads the task's status (the start of an execution does) misses none. Returns the
   * function that stops watching.
   */
  async watch(taskId: string, onEnd: Listener): Promise<() => Promise<void>> {
    let fired = false;
    const listener: Listener = (end) => {
      if (fired) return;
      fired = true;
      onEnd(end);
    };
    let listeners = this.#watched.get(taskId);
    if (listeners === undefined) {
      listeners = new Set();
      this.#watched.set(taskId, listeners);
    }
    listeners.add(listener);
    this.#timer ??= setInterval(() => void this.checkNow(), this.#intervalMs);

    const unwatch = async (): Promise<void> => {
      const set = this.#watched.get(taskId);
      set?.delete(listener);
      if (set?.size === 0) this.#watched.delete(taskId);
      if (this.#watched.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
    try {
      await this.#subscribed();
    } catch (error) {
      await unwatch();
      throw error;
    }
    return unwatch;
  }

  /** The process's one subscription to cancelled tasks, made on first use (again after a failure). */
  #subscribed(): Promise<unknown> {
    this.#subscription ??= this.#bus
      .onTaskCancelled((taskId) => this.#tell(taskId, 'cancelled'))
      .catch((error: unknown) => {
        this.#subscription = undefined;
        throw error;
      });
    return this.#subscription;
  }

  #tell(taskId: string, end: WatchEnd): void {
    for (const listener of [...(this.#watched.get(taskId) ?? [])]) listener(end);
  }

  /** Re-reads the status of every watched task and tells the listeners of those that ended. */
  async checkNow(): Promise<void> {
    const ids = [...this.#watched.keys()];
    if (ids.length === 0) return;
    try {
      const statuses = await this.#store.statuses(ids);
      ids.forEach((id, i) => {
        const status = statuses[i];
        if (status === undefined) return;
        const end = endOf(status);
        if (end !== undefined) this.#tell(id, end);
      });
    } catch (error) {
      // The next round (or the reconnect hook) tries again.
      this.#logger.warn({ err: errorMessage(error) }, 'task status check failed');
    }
  }

  /** Stops the timer and the reconnect hook (listeners are dropped). */
  close(): void {
    this.#offReconnect();
    if (this.#timer !== undefined) clearInterval(this.#timer);
    this.#timer = undefined;
    this.#watched.clear();
  }
}
