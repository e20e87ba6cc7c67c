import type { Redis } from 'ioredis';
import { type CatalogKind, Keys } from '../redis/keys.js';

export interface CatalogOptions<E> {
  readonly redis: Redis;
  readonly keys?: Keys;
  readonly kind: CatalogKind;
  /** The identity of an entry within its kind: a tool or prompt name, a resource URI, a URI template. */
  readonly keyOf: (entry: E) => string;
  /** An entry disappears from the catalog when no worker has announced it for this long (ms). */
  readonly staleAfterMs?: number;
  /**
   * How long `get` may answer a found entry from memory (ms; 0, the default, reads Redis every time). The
   * owner calls `invalidate` when the kind's channel announces a change, so only liveness lags this much.
   */
  readonly cacheMs?: number;
}

const byKey =
  <E>(keyOf: (entry: E) => string) =>
  (a: E, b: E): number => {
    const x = keyOf(a);
    const y = keyOf(b);
    return x < y ? -1 : x > y ? 1 : 0;
  };

/**
 * One kind of offering workers publish in Redis (tools, resources, resource templates, prompts): workers
 * write entries and heartbeats, gateways read the live ones. An entry whose workers all stopped drops out
 * after `staleAfterMs`; registering announces the change on the kind's channel (list_changed news).
 */
export class Catalog<E> {
  readonly staleAfterMs: number;
  readonly kind: CatalogKind;
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #keyOf: (entry: E) => string;
  readonly #cacheMs: number;
  readonly #cache = new Map<string, { readonly entry: E; readonly until: number }>();

  constructor(options: CatalogOptions<E>) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.kind = options.kind;
    this.#keyOf = options.keyOf;
    this.staleAfterMs = options.staleAfterMs ?? 30_000;
    this.#cacheMs = options.cacheMs ?? 0;
  }

  /** Forgets the entries `get` remembered (the kind's channel announced a change). */
  invalidate(): void {
    this.#cache.clear();
  }

  /**
   * Publishes (or replaces) entries and marks them live now; announces the change on the kind's channel
   * unless `announce` is false (a periodic refresh of unchanged entries is no news).
   */
  async register(entries: readonly E[], options: { readonly announce?: boolean } = {}): Promise<void> {
    if (entries.length === 0) return;
    const now = Date.now();
    const multi = this.#redis.multi();
    multi.hset(
      this.#keys.catalog(this.kind),
      ...entries.flatMap((entry) => [this.#keyOf(entry), JSON.stringify(entry)]),
    );
    multi.zadd(this.#keys.catalogLive(this.kind), ...entries.flatMap((entry) => [now, this.#keyOf(entry)]));
    if (options.announce !== false) multi.publish(this.#keys.catalogChannel(this.kind), 'registered');
    await multi.exec();
  }

  /** Marks entries live now (a worker still serves them). */
  async heartbeat(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    const now = Date.now();
    await this.#redis.zadd(this.#keys.catalogLive(this.kind), ...names.flatMap((name) => [now, name]));
  }

  /** Every live entry, sorted by key. */
  async list(): Promise<E[]> {
    const live = this.#keys.catalogLive(this.kind);
    const names = await this.#redis.zrangebyscore(live, Date.now() - this.staleAfterMs, '+inf');
    if (names.length === 0) return [];
    const values = await this.#redis.hmget(this.#keys.catalog(this.kind), ...names);
    return values
      .filter((value): value is string => value !== null)
      .map((value) => JSON.parse(value) as E)
      .sort(byKey(this.#keyOf));
  }

  /** One live entry by key (from memory for up to `cacheMs` after it was read). */
  async get(name: string): Promise<E | undefined> {
    const cached = this.#cache.get(name);
    if (cached !== undefined && cached.until > Date.now()) return cached.entry;
    const [score, value] = await Promise.all([
      this.#redis.zscore(this.#keys.catalogLive(this.kind), name),
      this.#redis.hget(this.#keys.catalog(this.kind), name),
    ]);
    if (score === null || value === null || Number(score) < Date.now() - this.staleAfterMs) return undefined;
    const entry = JSON.parse(value) as E;
    if (this.#cacheMs > 0) {
      if (this.#cache.size >= 10_000) this.#cache.clear();
      this.#cache.set(name, { entry, until: Date.now() + this.#cacheMs });
    }
    return entry;
  }
}

/**
 * Announces that the list of one kind of offering changed without a registration (a tool's own news): every
 * gateway forgets what it remembered of the kind and relays list_changed to the streams that asked for it.
 */
export async function announceListChanged(redis: Redis, keys: Keys, kind: CatalogKind): Promise<void> {
  await redis.publish(keys.catalogChannel(kind), 'changed');
}
