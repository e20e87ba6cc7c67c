import type { Redis } from 'ioredis';

interface Pending {
  readonly key: string;
  readonly fields: readonly string[];
  readonly resolve: (values: (string | null)[]) => void;
  readonly reject: (error: unknown) => void;
}

/**
 * HMGETs asked for by the continuations of one callback (one microtask run), sent once those have run as one
 * pipeline per slot tag (a pipeline on a Redis Cluster must stay in one slot; a lone read goes as itself):
 * when a burst of task messages wakes thousands of waiters at once, their reads go out in a few writes and
 * come back in a few reads, not one round trip and one socket write each. Not at the turn's end
 * (`setImmediate`): the connection's write batching (`write-batching.ts`) corks until then, and a pipeline
 * written in that phase would wait one more turn for its uncork.
 */
export class TurnBatch {
  readonly #redis: Redis;
  /** Pending reads by slot tag. */
  #pending = new Map<string, Pending[]>();

  constructor(redis: Redis) {
    this.#redis = redis;
  }

  /** `HMGET key ...fields`, sent with the others of this microtask run whose keys carry slot tag `tag`. */
  hmget(tag: string, key: string, fields: readonly string[]): Promise<(string | null)[]> {
    return new Promise((resolve, reject) => {
      if (this.#pending.size === 0) queueMicrotask(() => this.#flushAll());
      let group = this.#pending.get(tag);
      if (group === undefined) {
        group = [];
        this.#pending.set(tag, group);
      }
      group.push({ key, fields, resolve, reject });
    });
  }

  #flushAll(): void {
    const groups = this.#pending;
    this.#pending = new Map();
    for (const batch of groups.values()) void this.#flush(batch);
  }

  async #flush(batch: readonly Pending[]): Promise<void> {
    // A lone read goes out as itself: an ioredis pipeline copies every script the connection defines when it
    // is made (3.9 % of the gateway's profile at one task in flight), which only a batch pays back.
    const [only] = batch;
    if (batch.length === 1 && only !== undefined) {
      this.#redis.hmget(only.key, ...only.fields).then(only.resolve, only.reject);
      return;
    }
    const pipeline = this.#redis.pipeline();
    for (const { key, fields } of batch) pipeline.hmget(key, ...fields);
    try {
      const replies = (await pipeline.exec()) ?? [];
      batch.forEach(({ resolve, reject }, i) => {
        const [error, values] = replies[i] ?? [new Error('no reply in the pipeline'), null];
        if (error !== null) reject(error);
        else resolve(values as (string | null)[]);
      });
    } catch (error) {
      for (const { reject } of batch) reject(error);
    }
  }
}
