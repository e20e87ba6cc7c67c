import type { Redis } from 'ioredis';
import { Keys } from './keys.js';
import { ScriptCode } from './script-codes.js';
import { scriptRunner } from './scripts.js';

/** Which existing queue a position belongs to: the config's connection name and the queue as `prefix:name`. */
export interface BridgeStream {
  readonly connection: string;
  readonly queue: string;
}

/** What `advance` did: moved the position, found it there already, or found the lease another's. */
export type AdvanceReply = 'advanced' | 'applied-before' | 'not-held';

function code(raw: unknown): { code: number; detail?: unknown } {
  if (!Array.isArray(raw) || typeof raw[0] !== 'number') throw new Error('bridgePosition: unexpected reply');
  return { code: raw[0], detail: raw[1] };
}

/**
 * The bridge's positions in existing queues' event streams, in taskgate's own Redis: per queue the id of the
 * last applied entry and a lease naming the one replica that reads and applies the stream (the others stand
 * by and take over when it lapses). One hash per queue, changed only by `bridgePosition-1.lua`.
 */
export class BridgePositions {
  readonly #keys: Keys;
  readonly #run: ReturnType<typeof scriptRunner>;

  constructor(options: { redis: Redis; keys?: Keys }) {
    this.#keys = options.keys ?? new Keys();
    this.#run = scriptRunner(options.redis);
  }

  #key(stream: BridgeStream): string {
    return this.#keys.bridgePosition(stream.connection, stream.queue);
  }

  /**
   * Takes or renews the lease; the stored position when `holder` holds it now ('' when none was ever stored),
   * undefined when another replica does.
   */
  async hold(stream: BridgeStream, holder: string, leaseMs: number): Promise<string | undefined> {
    const reply = code(await this.#run('bridgePosition', [this.#key(stream)], ['hold', holder, leaseMs]));
    if (reply.code === ScriptCode.NotHeld) return undefined;
    if (reply.code !== ScriptCode.Ok) throw new Error(`bridgePosition: unexpected code ${reply.code}`);
    return typeof reply.detail === 'string' ? reply.detail : '';
  }

  /** Moves the position to `entryId` (and renews the lease) if `holder` holds it and the position is before. */
  async advance(stream: BridgeStream, holder: string, leaseMs: number, entryId: string): Promise<AdvanceReply> {
    const raw = await this.#run('bridgePosition', [this.#key(stream)], ['advance', holder, leaseMs, entryId]);
    const reply = code(raw);
    if (reply.code === ScriptCode.Ok) return 'advanced';
    if (reply.code === ScriptCode.Stale) return 'applied-before';
    if (reply.code === ScriptCode.NotHeld) return 'not-held';
    throw new Error(`bridgePosition: unexpected code ${reply.code}`);
  }

  /** Lets the lease lapse now if `holder` holds it, so a standby replica takes over at once. */
  async release(stream: BridgeStream, holder: string): Promise<void> {
    await this.#run('bridgePosition', [this.#key(stream)], ['release', holder, 0]);
  }
}
