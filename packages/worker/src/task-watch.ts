import type { EventBus, Keys } from '@taskgate/core';
import { errorMessage, type Logger } from '@taskgate/core';
import type { Redis } from 'ioredis';

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
 * Each task's channel carries every status change, through the process's one pub/sub connection; because
 * pub/sub is at-most-once, one timer per process also re-reads the status of every watched task (one
 * pipelined round trip) every `intervalMs` and after each reconnect of the subscriber.
 */
export class TaskWatch {
  readonly #watched = new Map<string, Set<Listener>>();
  readonly #redis: Redis;
  readonly #bus: EventBus;
  readonly #keys: Keys;
  readonly #intervalMs: number;
  readonly #logger: Logger;
  readonly #offReconnect: () => void;
  #timer: NodeJS.Timeout | undefined;

  constructor(options: { redis: Redis; bus: EventBus; keys: Keys; intervalMs: number; logger: Logger }) {
    this.#redis = options.redis;
    this.#bus = options.bus;
    this.#keys = options.keys;
    this.#intervalMs = options.intervalMs;
    this.#logger = options.logger;
    this.#offReconnect = this.#bus.onReconnect(() => void this.checkNow());
  }

  /** Number of tasks watched now. */
  get size(): number {
    return this.#watched.size;
  }

  /**
   * Calls `onEnd` (at most once) when the task is cancelled, gone or finished. Resolves once the watch is
   * live and the current status was read, so no change between the caller's last read and now is missed.
   * Returns the function that stops watching.
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

    const unwatch = (): void => {
      const set = this.#watched.get(taskId);
      set?.delete(listener);
      if (set?.size === 0) this.#watched.delete(taskId);
      if (this.#watched.size === 0 && this.#timer !== undefined) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
    let unsubscribe: () => Promise<void>;
    try {
      unsubscribe = await this.#bus.subscribe(this.#keys.taskChannel(taskId), (message) => {
        const status = parseStatus(message);
        const end = status === undefined ? undefined : endOf(status);
        if (end !== undefined) listener(end);
      });
      const end = endOf(await this.#redis.hget(this.#keys.task(taskId), 'status'));
      if (end !== undefined) listener(end);
    } catch (error) {
      unwatch();
      throw error;
    }
    return async () => {
      unwatch();
      await unsubscribe();
    };
  }

  /** Re-reads the status of every watched task and tells the listeners of those that ended. */
  async checkNow(): Promise<void> {
    const ids = [...this.#watched.keys()];
    if (ids.length === 0) return;
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hget(this.#keys.task(id), 'status');
    try {
      const replies = (await pipeline.exec()) ?? [];
      ids.forEach((id, i) => {
        const [error, status] = replies[i] ?? [new Error('no reply')];
        if (error !== null) return;
        const end = endOf(status as string | null);
        if (end === undefined) return;
        for (const listener of [...(this.#watched.get(id) ?? [])]) listener(end);
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

function parseStatus(message: string): string | undefined {
  try {
    const snapshot = JSON.parse(message) as { status?: unknown };
    return typeof snapshot.status === 'string' ? snapshot.status : undefined;
  } catch {
    return undefined;
  }
}
