import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** How long a task's hand-off record outlives its last change: longer than any task lives. */
const KEEP_MS = 7 * 24 * 3600 * 1000;

/**
 * Where a task's one AMQP request stands: never published ('new': publish now), being published ('sending': a
 * crash may have cut it short, so the broker may or may not have it), or confirmed by the broker at `sentAt`.
 */
export type AmqpHandOff = { readonly state: 'new' | 'sending' } | { readonly state: 'sent'; readonly sentAt: number };

/**
 * What taskgate's Redis remembers of each AMQP-bridged task, so that a bridge killed at any point and restarted
 * (or another replica) does not publish a request the broker confirmed again, counts the task's timeout from the
 * first publish, and knows a reply to the task for one of its own (a reply to an id without a record is dropped).
 */
export class AmqpHandOffs {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  /** Starts the hand-off unless one started before: 'new' (publish now), else the state it reached. */
  async begin(taskId: string): Promise<AmqpHandOff> {
    const key = this.#keys.amqpHandOff(taskId);
    if ((await this.#redis.set(key, 'sending', 'PX', KEEP_MS, 'NX')) === 'OK') return { state: 'new' };
    return parse(await this.#redis.get(key));
  }

  /** The broker confirmed the request at `sentAt` (ms since the epoch). */
  async sent(taskId: string, sentAt: number): Promise<void> {
    await this.#redis.set(this.#keys.amqpHandOff(taskId), `sent:${sentAt}`, 'PX', KEEP_MS);
  }

  /** The task's hand-off, or undefined when no bridge ever began one (a reply to it is not for taskgate). */
  async read(taskId: string): Promise<AmqpHandOff | undefined> {
    const value = await this.#redis.get(this.#keys.amqpHandOff(taskId));
    return value === null ? undefined : parse(value);
  }
}

function parse(value: string | null): AmqpHandOff {
  const sentAt = value?.startsWith('sent:') ? Number(value.slice(5)) : Number.NaN;
  return Number.isFinite(sentAt) ? { state: 'sent', sentAt } : { state: 'sending' };
}
