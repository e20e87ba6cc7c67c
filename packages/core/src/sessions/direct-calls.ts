import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

export interface DirectCallsOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
}

/**
 * The index of a session's open direct calls (plain `tools/call`) by the JSON-RPC id of their request, so that
 * `notifications/cancelled` on any gateway finds the call's hidden record. A call whose entry is gone by the
 * time it turns cancelled was cancelled by the client: its stream sends no response.
 */
export class DirectCalls {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: DirectCallsOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  /** Records the call of `requestId` in the session, for as long as its record lives (`ttlMs`). */
  async open(sessionId: string, requestId: string | number, taskId: string, ttlMs: number): Promise<void> {
    await this.#redis.set(this.#keys.clientCall(sessionId, requestId), taskId, 'PX', ttlMs);
  }

  /** The task id of the session's open call of `requestId`, if any. */
  async find(sessionId: string, requestId: string | number): Promise<string | undefined> {
    return (await this.#redis.get(this.#keys.clientCall(sessionId, requestId))) ?? undefined;
  }

  /** Whether the call is still open (not closed by `close`, e.g. by the client's cancellation). */
  async isOpen(sessionId: string, requestId: string | number): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.clientCall(sessionId, requestId))) === 1;
  }

  /** Forgets the call (it ended, or the client cancelled it). */
  async close(sessionId: string, requestId: string | number): Promise<void> {
    await this.#redis.del(this.#keys.clientCall(sessionId, requestId));
  }
}
