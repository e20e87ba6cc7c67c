import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** What a bridge stored about a task's call to an upstream MCP server, so another bridge can follow it. */
export interface UpstreamCallRecord {
  /** The configured server's name. */
  readonly server: string;
  /** The upstream's own task id, when the upstream runs the call as a task. */
  readonly upstreamTaskId: string;
  /** The Streamable HTTP session the upstream task belongs to (upstream task stores are often per session). */
  readonly sessionId?: string;
}

/**
 * The upstream tasks of running taskgate tasks: written after the upstream created its task and before the
 * bridge waits on it, read by the bridge that runs the task again after a crash (it follows the same upstream
 * task instead of calling the tool twice). One hash per task, in the task's slot, gone with the task's TTL.
 */
export class UpstreamCalls {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  #key(taskId: string): string {
    return `${this.#keys.task(taskId)}:upstream`;
  }

  /** Stores the upstream task of `taskId` for `ttlMs`. */
  async record(taskId: string, call: UpstreamCallRecord, ttlMs: number): Promise<void> {
    const fields = ['server', call.server, 'upstreamTaskId', call.upstreamTaskId];
    if (call.sessionId !== undefined) fields.push('sessionId', call.sessionId);
    await this.#redis
      .multi()
      .hset(this.#key(taskId), ...fields)
      .pexpire(this.#key(taskId), ttlMs)
      .exec();
  }

  /** The upstream task stored for `taskId`, if any. */
  async read(taskId: string): Promise<UpstreamCallRecord | undefined> {
    const hash = await this.#redis.hgetall(this.#key(taskId));
    if (hash.server === undefined || hash.upstreamTaskId === undefined) return undefined;
    return {
      server: hash.server,
      upstreamTaskId: hash.upstreamTaskId,
      ...(hash.sessionId !== undefined && { sessionId: hash.sessionId }),
    };
  }

  /** Forgets the upstream task of `taskId` (its outcome is stored on the task). */
  async clear(taskId: string): Promise<void> {
    await this.#redis.del(this.#key(taskId));
  }
}
