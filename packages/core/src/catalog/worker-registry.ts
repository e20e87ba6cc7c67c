import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** A worker process as its heartbeat describes it. */
export interface WorkerInfo {
  /** Random id of the process (one pod may run several). */
  readonly id: string;
  readonly pod: string;
  readonly tools: readonly string[];
  readonly startedAt: number;
  /** When its heartbeat lease runs out (ms since the epoch) unless it beats again. */
  readonly until: number;
}

/**
 * Worker heartbeats for operators: each worker process keeps a key with its pod name and tools alive (PX
 * lease) and an entry in one index; the live workers are the index entries whose key still exists. All keys
 * share the catalog's slot.
 */
export class WorkerRegistry {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(redis: Redis, keys: Keys = new Keys()) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** Writes (or renews) a worker's heartbeat for `leaseMs`. */
  async beat(info: Omit<WorkerInfo, 'until'>, leaseMs: number): Promise<void> {
    const until = Date.now() + leaseMs;
    const multi = this.#redis.multi();
    multi.set(this.#keys.worker(info.id), JSON.stringify({ ...info, until }), 'PX', leaseMs);
    multi.zadd(this.#keys.workers(), until, info.id);
    // Entries whose lease ran out long ago: their keys are gone already.
    multi.zremrangebyscore(this.#keys.workers(), '-inf', Date.now() - 10 * leaseMs);
    await multi.exec();
  }

  /** Removes a worker at once (a clean shutdown). */
  async leave(workerId: string): Promise<void> {
    const multi = this.#redis.multi();
    multi.del(this.#keys.worker(workerId));
    multi.zrem(this.#keys.workers(), workerId);
    await multi.exec();
  }

  /** Workers whose heartbeat is alive, by pod name. */
  async alive(): Promise<WorkerInfo[]> {
    const ids = await this.#redis.zrangebyscore(this.#keys.workers(), Date.now(), '+inf');
    if (ids.length === 0) return [];
    const values = await this.#redis.mget(...ids.map((id) => this.#keys.worker(id)));
    return values
      .filter((value): value is string => value !== null)
      .map((value) => JSON.parse(value) as WorkerInfo)
      .sort((a, b) => (a.pod < b.pod ? -1 : a.pod > b.pod ? 1 : a.id < b.id ? -1 : 1));
  }
}
