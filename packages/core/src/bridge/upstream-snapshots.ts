import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/**
 * The last tool list a bridge read from each upstream MCP server, so a bridge that starts while the server is
 * down publishes those entries (marked unavailable) instead of none. One string per server, kept for `ttlMs`.
 */
export class UpstreamSnapshots {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  #key(server: string): string {
    return `${this.#keys.prefix}:bridge:upstream:${encodeURIComponent(server)}:tools`;
  }

  /** Stores the upstream's tools (as it listed them) for `ttlMs`. */
  async save(server: string, tools: readonly unknown[], ttlMs: number): Promise<void> {
    await this.#redis.set(this.#key(server), JSON.stringify(tools), 'PX', ttlMs);
  }

  /** The tools last stored for `server`; empty when none were. */
  async load(server: string): Promise<unknown[]> {
    const text = await this.#redis.get(this.#key(server));
    if (text === null) return [];
    const parsed: unknown = JSON.parse(text);
    return Array.isArray(parsed) ? parsed : [];
  }
}
