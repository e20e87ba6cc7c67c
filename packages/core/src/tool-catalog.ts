import type { Tool } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { Keys } from './keys.js';

/** A tool as workers publish it: its wire description and how the broker runs it. */
export interface CatalogEntry {
  /** What `tools/list` shows, including `execution.taskSupport` and the JSON Schema of the arguments. */
  readonly tool: Tool;
  /** BullMQ queue that the tool's workers consume. */
  readonly queue: string;
  /** Executions per task before it fails (BullMQ attempts). */
  readonly attempts: number;
  /** Delay before a retry (ms), doubled per attempt; whoever enqueues passes it on (ToolJobPolicy.backoffMs). */
  readonly backoffMs?: number;
}

export interface ToolCatalogOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** A tool disappears from the catalog when no worker has announced it for this long (ms). */
  readonly staleAfterMs?: number;
}

/**
 * The tools workers offer, in Redis: workers write entries and heartbeats, gateways read the live ones.
 * A tool whose workers all stopped drops out of `tools/list` after `staleAfterMs`.
 */
export class ToolCatalog {
  readonly staleAfterMs: number;
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: ToolCatalogOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.staleAfterMs = options.staleAfterMs ?? 30_000;
  }

  /** Publishes (or replaces) entries and marks them live now; announces the change on the tools channel. */
  async register(entries: readonly CatalogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const now = Date.now();
    const multi = this.#redis.multi();
    multi.hset(this.#keys.toolCatalog(), ...entries.flatMap((entry) => [entry.tool.name, JSON.stringify(entry)]));
    multi.zadd(this.#keys.toolsLive(), ...entries.flatMap((entry) => [now, entry.tool.name]));
    multi.publish(this.#keys.toolsChannel(), 'registered');
    await multi.exec();
  }

  /** Marks tools live now (a worker still serves them). */
  async heartbeat(names: readonly string[]): Promise<void> {
    if (names.length === 0) return;
    const now = Date.now();
    await this.#redis.zadd(this.#keys.toolsLive(), ...names.flatMap((name) => [now, name]));
  }

  /** Every live entry, sorted by tool name. */
  async list(): Promise<CatalogEntry[]> {
    const names = await this.#redis.zrangebyscore(this.#keys.toolsLive(), Date.now() - this.staleAfterMs, '+inf');
    if (names.length === 0) return [];
    const values = await this.#redis.hmget(this.#keys.toolCatalog(), ...names);
    return values
      .filter((value): value is string => value !== null)
      .map((value) => JSON.parse(value) as CatalogEntry)
      .sort((a, b) => (a.tool.name < b.tool.name ? -1 : a.tool.name > b.tool.name ? 1 : 0));
  }

  /** One live entry by tool name. */
  async get(name: string): Promise<CatalogEntry | undefined> {
    const [score, value] = await Promise.all([
      this.#redis.zscore(this.#keys.toolsLive(), name),
      this.#redis.hget(this.#keys.toolCatalog(), name),
    ]);
    if (score === null || value === null || Number(score) < Date.now() - this.staleAfterMs) return undefined;
    return JSON.parse(value) as CatalogEntry;
  }
}
