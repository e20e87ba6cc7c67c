import type { Redis } from 'ioredis';
import { RateLimiterRedis, RateLimiterRes } from 'rate-limiter-flexible';
import { Keys } from '../redis/keys.js';

export interface RateLimiterOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** The operation class the budget is for (part of the key). */
  readonly operation: string;
  /** Operations per window. */
  readonly points: number;
  readonly durationSec: number;
}

/** Whether one operation was within the budget; when not, how long until the window ends. */
export type RateLimitVerdict = { readonly allowed: true } | { readonly allowed: false; readonly retryAfterMs: number };

/**
 * A fixed-window budget per principal for one operation class, counted in Redis (rate-limiter-flexible's
 * atomic INCR + PEXPIRE script), so every gateway of a deployment spends from the same budget. Principals
 * appear in keys only as digests.
 */
export class RateLimiter {
  readonly #limiter: RateLimiterRedis;

  constructor(options: RateLimiterOptions) {
    const keys = options.keys ?? new Keys();
    this.#limiter = new RateLimiterRedis({
      storeClient: options.redis,
      keyPrefix: keys.rateLimit(options.operation),
      points: options.points,
      duration: options.durationSec,
    });
  }

  /** Spends one operation of `owner`'s budget. Rejects when Redis fails. */
  async consume(owner: string): Promise<RateLimitVerdict> {
    try {
      await this.#limiter.consume(Keys.ownerId(owner));
      return { allowed: true };
    } catch (error) {
      if (!(error instanceof RateLimiterRes)) throw error;
      return { allowed: false, retryAfterMs: Math.max(1, error.msBeforeNext) };
    }
  }
}
