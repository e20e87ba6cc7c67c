import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';
import { Scripts } from '../redis/script-replies.js';

/** Which existing queue a position belongs to: the config's connection name and the queue as `prefix:name`. */
export interface BridgeStream {
  readonly connection: string;
  readonly queue: string;
}

/** What `advance` did: moved the position, found it there already, or found the lease another's. */
export type AdvanceReply = 'advanced' | 'applied-before' | 'not-held';

/**
 * The bridge's positions in existing queues' event streams, in taskgate's own Redis: per queue the id of the
 * last applied entry and a lease naming the one replica that reads and applies the stream (the others stand
 * by and take over when it lapses). One hash per queue, changed only by `bridgePosition-1.lua`.
 */
export class BridgePositions {
  readonly #keys: Keys;
  readonly #scripts: Scripts;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#keys = options.keys ?? new Keys();
    this.#scripts = new Scripts(options.redis);
  }

  #key(stream: BridgeStream): string {
    return this.#keys.bridgePosition(stream.connection, stream.queue);
  }

  /**
   * Takes or renews the lease; the stored position when `holder` holds it now ('' when none was ever stored),
   * undefined when another replica does.
   */
  async hold(stream: BridgeStream, holder: string, leaseMs: number): Promise<string | undefined> {
    const reply = await this.#scripts.bridgePosition([this.#key(stream)], ['hold', holder, leaseMs]);
    if (reply.kind === 'not_held') return undefined;
    if (reply.kind === 'stale') throw new Error('bridgePosition: hold answered stale');
    return reply.position;
  }

  /** Moves the position to `entryId` (and renews the lease) if `holder` holds it and the position is before. */
  async advance(stream: BridgeStream, holder: string, leaseMs: number, entryId: string): Promise<AdvanceReply> {
    const reply = await this.#scripts.bridgePosition([this.#key(stream)], ['advance', holder, leaseMs, entryId]);
    if (reply.kind === 'ok') return 'advanced';
    return reply.kind === 'stale' ? 'applied-before' : 'not-held';
  }

  /** Lets the lease lapse now if `holder` holds it, so a standby replica takes over at once. */
  async release(stream: BridgeStream, holder: string): Promise<void> {
    await this.#scripts.bridgePosition([this.#key(stream)], ['release', holder, 0]);
  }
}
