import type { Redis } from 'ioredis';
import { shardPublishCommand } from '../redis/connection.js';
import { Keys } from '../redis/keys.js';
import { ResourceInterest } from './resource-interest.js';

/** Hash fields of a session that hold its resource subscriptions: `sub:{uri}`. */
const FIELD_PREFIX = 'sub:';

export interface ResourceSubscriptionsOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** The sessions' idle expiry (ms): a field written to an ended session's key must not outlive it. */
  readonly idleTtlMs: number;
}

/**
 * Which resources each session subscribed to (`resources/subscribe`), in Redis: fields of the session's own
 * hash, so they expire and end with the session and any gateway reads them. A change is announced on the
 * session's subscriptions channel, where the session's GET stream (on whichever gateway) picks it up.
 */
export class ResourceSubscriptions {
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #idleTtlMs: number;
  readonly #interest: ResourceInterest;

  constructor(options: ResourceSubscriptionsOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.#idleTtlMs = options.idleTtlMs;
    this.#interest = new ResourceInterest({ redis: this.#redis, keys: this.#keys });
  }

  /**
   * Adds `uri` to the session's subscriptions (idempotent), and to the interest across sessions (another hash
   * slot, so a command of its own) that tells a bridge to subscribe upstream.
   */
  async subscribe(sessionId: string, uri: string): Promise<void> {
    const key = this.#keys.session(sessionId);
    await this.#interest.add(sessionId, uri, this.#idleTtlMs);
    await this.#redis
      .multi()
      .hset(key, `${FIELD_PREFIX}${uri}`, '1')
      .pexpire(key, this.#idleTtlMs)
      [shardPublishCommand(this.#redis)](this.#keys.sessionSubscriptionsChannel(sessionId), 'changed')
      .exec();
  }

  /** Removes `uri` from the session's subscriptions; false when it was not subscribed. */
  async unsubscribe(sessionId: string, uri: string): Promise<boolean> {
    await this.#interest.remove(sessionId, uri);
    const replies = await this.#redis
      .multi()
      .hdel(this.#keys.session(sessionId), `${FIELD_PREFIX}${uri}`)
      [shardPublishCommand(this.#redis)](this.#keys.sessionSubscriptionsChannel(sessionId), 'changed')
      .exec();
    return replies?.[0]?.[1] === 1;
  }

  /**
   * Records that a stream without a session (2026-07-28 `subscriptions/listen`) listens to `uri` for the next
   * `ttlMs`; the stream renews it while it is open.
   */
  async listen(listenerId: string, uri: string, ttlMs: number): Promise<void> {
    await this.#interest.add(listenerId, uri, ttlMs);
  }

  /** Forgets what `listen` recorded (the stream ended). */
  async unlisten(listenerId: string, uri: string): Promise<void> {
    await this.#interest.remove(listenerId, uri);
  }

  /** The URIs the session is subscribed to. */
  async list(sessionId: string): Promise<string[]> {
    const fields = await this.#redis.hkeys(this.#keys.session(sessionId));
    return fields.filter((field) => field.startsWith(FIELD_PREFIX)).map((field) => field.slice(FIELD_PREFIX.length));
  }
}

/**
 * Announces that a resource changed: every gateway relays `notifications/resources/updated` to the GET
 * streams of the sessions subscribed to `uri` (pub/sub: sessions without an open GET stream miss it).
 */
export async function announceResourceUpdated(redis: Redis, keys: Keys, uri: string): Promise<void> {
  await redis.publish(keys.resourceUpdatedChannel(), uri);
}
