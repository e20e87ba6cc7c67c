import type { Redis } from 'ioredis';

/** How long a reading of the Redis clock is extrapolated before the next `TIME` (ms). */
const RESYNC_MS = 10_000;

/**
 * The Redis server's clock as one process follows it: a `TIME` at first use and then at most once every
 * 10 s, and in between that reading plus the time elapsed on the process's monotonic clock (from the middle of
 * the round trip that read it). Pods with skewed wall clocks still agree, to within half a round trip, and a
 * time taken per task (a first attempt's start) costs no command of its own.
 */
export class RedisClock {
  readonly #redis: Redis;
  /** The Redis time (ms) at `#at` (performance.now()). */
  #redisMs = 0;
  #at = Number.NEGATIVE_INFINITY;
  #syncing: Promise<void> | undefined;

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  /** Now on the Redis server's clock (unix ms). */
  async now(): Promise<number> {
    if (performance.now() - this.#at > RESYNC_MS) await this.#sync();
    return Math.floor(this.#redisMs + (performance.now() - this.#at));
  }

  #sync(): Promise<void> {
    this.#syncing ??= (async () => {
      const sent = performance.now();
      const [seconds, micros] = await this.#redis.time();
      this.#redisMs = Number(seconds) * 1000 + Number(micros) / 1000;
      this.#at = (sent + performance.now()) / 2;
    })().finally(() => {
      this.#syncing = undefined;
    });
    return this.#syncing;
  }
}
