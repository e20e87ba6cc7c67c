import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

export interface ResourceInterestOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
}

/**
 * Which resource URIs some session is subscribed to, across sessions and gateways: what a bridge needs to
 * subscribe to an upstream server's resource while anyone listens, and to unsubscribe once nobody does. One
 * sorted set, `<uri>\n<session digest>` → when the subscription lapses (the session's idle expiry): a session
 * that ends without unsubscribing drops out by itself.
 */
export class ResourceInterest {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: ResourceInterestOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  /** Records that `sessionId` listens to `uri` until `ttlMs` from now. */
  async add(sessionId: string, uri: string, ttlMs: number): Promise<void> {
    await this.#redis.zadd(this.#keys.resourceInterest(), Date.now() + ttlMs, `${uri}\n${Keys.digest(sessionId)}`);
  }

  /** Forgets that `sessionId` listens to `uri`. */
  async remove(sessionId: string, uri: string): Promise<void> {
    await this.#redis.zrem(this.#keys.resourceInterest(), `${uri}\n${Keys.digest(sessionId)}`);
  }

  /** Every URI at least one live subscription names (lapsed ones are dropped on the way). */
  async uris(): Promise<Set<string>> {
    const key = this.#keys.resourceInterest();
    await this.#redis.zremrangebyscore(key, '-inf', Date.now());
    const members = await this.#redis.zrange(key, 0, -1);
    return new Set(members.map((member) => member.slice(0, member.lastIndexOf('\n'))));
  }
}
