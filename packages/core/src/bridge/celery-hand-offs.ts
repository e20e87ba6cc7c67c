import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** How long a task's hand-off record outlives its last change: longer than any task lives. */
const KEEP_MS = 7 * 24 * 3600 * 1000;

/** Where a task's one Celery message stands: never sent, being sent (a crash may have cut it short), sent. */
export type HandOffState = 'new' | 'sending' | 'sent';

/**
 * What taskgate's Redis remembers of each Celery-bridged task, so that a bridge killed at any point and
 * restarted (or another replica) neither sends the task's Celery message twice nor applies a state twice:
 * whether the message was sent, and a digest of the last Celery state applied to the task.
 */
export class CeleryHandOffs {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  /** Starts the hand-off unless one started before: 'new' (send now), else the state it reached. */
  async begin(taskId: string): Promise<HandOffState> {
    const key = this.#keys.celeryHandOff(taskId);
    if ((await this.#redis.set(key, 'sending', 'PX', KEEP_MS, 'NX')) === 'OK') return 'new';
    return (await this.#redis.get(key)) === 'sent' ? 'sent' : 'sending';
  }

  /** The message is in the broker. */
  async sent(taskId: string): Promise<void> {
    await this.#redis.set(this.#keys.celeryHandOff(taskId), 'sent', 'PX', KEEP_MS);
  }

  /** Whether the message was sent (or may have been: a hand-off cut short counts as sent). */
  async wasSent(taskId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.celeryHandOff(taskId))) === 1;
  }

  /** Records `digest` as the last state applied; true when it differs from the one before (apply it now). */
  async claim(taskId: string, digest: string): Promise<boolean> {
    const before = await this.#redis.set(this.#keys.celeryApplied(taskId), digest, 'PX', KEEP_MS, 'GET');
    return before !== digest;
  }

  /** Whether any state of the task was applied (its result existed once). */
  async appliedAny(taskId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.celeryApplied(taskId))) === 1;
  }
}
