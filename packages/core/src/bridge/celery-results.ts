import type { Redis } from 'ioredis';
import { createRedisConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/redis-close.js';

/** Celery's Redis result backend names a task's key and its channel alike. */
const KEY_PREFIX = 'celery-task-meta-';

/** A task's state as Celery's Redis result backend stores and publishes it (JSON serializer). */
export interface CeleryMeta {
  readonly status: string;
  readonly result?: unknown;
  readonly traceback?: string | null;
  readonly date_done?: string | null;
  readonly task_id?: string;
}

function metaOf(text: string | null): CeleryMeta | undefined {
  if (text === null) return undefined;
  try {
    const meta = JSON.parse(text) as Partial<CeleryMeta>;
    return typeof meta.status === 'string' ? (meta as CeleryMeta) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Celery's Redis result backend, read: a task's key `celery-task-meta-<id>` keeps its latest state (until
 * `result_expires`), and each state stored is also published on the channel of the same name. One subscriber
 * connection per backend serves every task followed here.
 */
export class CeleryResults {
  readonly #redis: Redis;
  readonly #subscriber: Redis;
  readonly #listeners = new Map<string, Set<(meta: CeleryMeta) => void>>();

  constructor(url: string, onError: (error: Error) => void) {
    this.#redis = createRedisConnection(url, 'command', onError);
    this.#subscriber = createRedisConnection(url, 'subscriber', onError);
    this.#subscriber.on('message', (channel: string, message: string) => {
      const meta = metaOf(message);
      if (meta === undefined) return;
      for (const listener of this.#listeners.get(channel) ?? []) listener(meta);
    });
  }

  /** The task's latest stored state; undefined when none is stored (not started, or expired). */
  async meta(taskId: string): Promise<CeleryMeta | undefined> {
    return metaOf(await this.#redis.get(`${KEY_PREFIX}${taskId}`));
  }

  /**
   * Calls `listener` with every state of the task stored from now on, once subscribed (a subscription made
   * while the backend is down starts when it is back; a reconnect may miss states, so the key is read too).
   * The returned function stops.
   */
  watch(taskId: string, listener: (meta: CeleryMeta) => void): () => void {
    const channel = `${KEY_PREFIX}${taskId}`;
    let listeners = this.#listeners.get(channel);
    if (listeners === undefined) {
      listeners = new Set();
      this.#listeners.set(channel, listeners);
    }
    listeners.add(listener);
    if (listeners.size === 1) this.#subscriber.subscribe(channel).catch(() => {});
    return () => {
      const current = this.#listeners.get(channel);
      current?.delete(listener);
      if (current?.size === 0) {
        this.#listeners.delete(channel);
        this.#subscriber.unsubscribe(channel).catch(() => {});
      }
    };
  }

  async close(): Promise<void> {
    await Promise.all([closeRedis(this.#redis), closeRedis(this.#subscriber)]);
  }
}
