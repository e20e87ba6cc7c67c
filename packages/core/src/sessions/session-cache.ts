import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { createRedisConnection, isClusterConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/redis-close.js';

/** The channel a redirected tracking connection's invalidations arrive on (RESP2). */
const INVALIDATIONS = '__redis__:invalidate';

/** An entry is read again after this long whatever Redis said: the bound on staleness if a message is lost. */
export const SESSION_CACHE_MAX_AGE_MS = 5000;

/** Entries held at most; the oldest go first. */
const MAX_ENTRIES = 10_000;

interface Entry {
  readonly fields: Record<string, string>;
  readonly at: number;
}

export interface SessionCacheOptions {
  /**
   * The process's commands connection: sessions are read on it, tracked (`OPTIN`: only those reads); the cache
   * opens one connection of its own beside it, for the invalidations.
   */
  readonly redis: Redis;
  /**
   * Hears a refused set-up (an ACL without CLIENT, a proxy that does not pass it on): sessions are read
   * uncached then, until a reconnect sets tracking up. Connection errors are ioredis's to retry.
   */
  readonly onSetUpFailed?: (error: Error) => void;
}

/**
 * Session hashes kept in the process with Redis's server-assisted client-side caching: the commands connection
 * tracks the keys it reads right after `CLIENT CACHING YES` (`CLIENT TRACKING ON REDIRECT <id> OPTIN`: those
 * reads only), and Redis sends the key of every one that changes, is deleted, expires or is evicted, wherever
 * the write came from, to a connection of the cache's own subscribed to `__redis__:invalidate`. A request of a
 * busy session then costs no Redis round trip for its session, and the process one connection more.
 *
 * Invalidations travel on another connection than the reads, so a read's reply may come after the message
 * that makes it stale: a read keeps its reply only if no invalidation of its key (and no reconnect) came while
 * it was in flight. A dropped connection of either kind empties the cache and stops it until tracking is set
 * up again on both; an entry is read again after `SESSION_CACHE_MAX_AGE_MS` in any case. A hit is answered
 * after the event loop's I/O callbacks, so an invalidation that arrived with the request is applied first.
 * None on a Cluster (`open` returns undefined): its keys live on many nodes, each with its own tracking.
 */
export class SessionCache {
  readonly #reader: Redis;
  readonly #invalidations: Redis;
  readonly #onSetUpFailed: (error: Error) => void;
  /** The invalidations connection's name (CLIENT SETNAME), by which the reader's server is asked for it. */
  readonly #name = `taskgate-invalidations-${randomBytes(8).toString('hex')}`;
  readonly #entries = new Map<string, Entry>();
  /** Reads in flight by key: the token an invalidation of the key takes away. */
  readonly #pending = new Map<string, number>();
  #token = 0;
  #reads = 0;
  /** Counts set-ups and lapses: a read keeps its reply only within the one it was sent in. */
  #epoch = 0;
  #live = false;
  /** The invalidations connection's id while it is subscribed (a new connection has a new id). */
  #redirect: string | undefined;
  /** Counts the invalidations connection's drops, so an id is kept only for the connection it came from. */
  #invalidationsDrops = 0;
  /** Set-ups run one at a time (both connections report `ready`). */
  #setUp: Promise<void> = Promise.resolve();
  #closed = false;
  /** Its listeners on both connections (the commands connection outlives the cache). */
  readonly #onClose = (): void => this.#lapse();
  readonly #onReady = (): void => {
    this.#setUp = this.#setUp.then(() => this.#track());
  };

  /** A cache reading through `options.redis`'s server, or undefined on a Cluster. */
  static open(options: SessionCacheOptions): SessionCache | undefined {
    return isClusterConnection(options.redis) ? undefined : new SessionCache(options);
  }

  private constructor(options: SessionCacheOptions) {
    this.#onSetUpFailed = options.onSetUpFailed ?? (() => {});
    this.#reader = options.redis;
    // Its errors are ioredis's to retry; a drop shows as `close`.
    this.#invalidations = createRedisConnection(options.redis, 'invalidations', () => {});
    this.#invalidations.on('messageBuffer', (channel: Buffer, keys: unknown) => this.#invalidate(channel, keys));
    this.#invalidations.on('close', () => {
      this.#redirect = undefined;
      this.#invalidationsDrops++;
    });
    for (const connection of [this.#reader, this.#invalidations]) {
      connection.on('close', this.#onClose);
      connection.on('ready', this.#onReady);
    }
    // The commands connection may be ready already (its `ready` came before this cache).
    this.#onReady();
  }

  /** The invalidations connection (for health metrics; never send commands on it). */
  get connection(): Redis {
    return this.#invalidations;
  }

  /** True while tracking is set up: hits are served and replies kept. */
  get live(): boolean {
    return this.#live;
  }

  /** Entries held. */
  get size(): number {
    return this.#entries.size;
  }

  /** Hashes read from Redis so far (the misses). */
  get reads(): number {
    return this.#reads;
  }

  /**
   * The hash at `key`: the entry when it is fresh, else read on the tracking connection (and kept when it is a
   * session's, `protocolVersion` set). Undefined while tracking is not set up: read it another way then.
   */
  read(key: string): Promise<Record<string, string>> | undefined {
    if (!this.#live) return undefined;
    const entry = this.#entries.get(key);
    if (entry !== undefined && Date.now() - entry.at < SESSION_CACHE_MAX_AGE_MS) {
      return new Promise((resolve) => setImmediate(() => resolve(this.#entries.get(key)?.fields ?? this.#load(key))));
    }
    return this.#load(key);
  }

  /** Drops `key`'s entry (a write of this process: its own invalidation would come a moment later). */
  forget(key: string): void {
    this.#entries.delete(key);
    this.#pending.delete(key);
  }

  /**
   * Stops tracking on the commands connection (which stays open, without this cache's listeners) and closes
   * the invalidations connection.
   */
  async close(): Promise<void> {
    this.#closed = true;
    this.#lapse();
    this.#reader.off('close', this.#onClose);
    this.#reader.off('ready', this.#onReady);
    if (this.#reader.status === 'ready') await this.#reader.client('TRACKING', 'OFF').catch(() => {});
    await closeRedis(this.#invalidations);
  }

  async #load(key: string): Promise<Record<string, string>> {
    const token = ++this.#token;
    const epoch = this.#epoch;
    this.#pending.set(key, token);
    this.#reads++;
    try {
      // Sent together (nothing else can come between two calls of one turn): the read right after is tracked.
      // A refusal means tracking is off (a reconnect resent them): the read is not kept then.
      const tracked = this.#reader.client('CACHING', 'YES').then(
        () => true,
        () => false,
      );
      const fields = await this.#reader.hgetall(key);
      const untouched = (await tracked) && this.#pending.get(key) === token && epoch === this.#epoch && this.#live;
      if (untouched && fields.protocolVersion !== undefined) {
        if (this.#entries.size >= MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
        this.#entries.set(key, { fields, at: Date.now() });
      }
      return fields;
    } finally {
      if (this.#pending.get(key) === token) this.#pending.delete(key);
    }
  }

  /** A message on the invalidations connection: the keys changed, or null when the database was flushed. */
  #invalidate(channel: Buffer, keys: unknown): void {
    if (channel.toString() !== INVALIDATIONS) return;
    if (Array.isArray(keys)) for (const key of keys) this.forget(String(key));
    else this.#forgetAll();
  }

  /** Either connection dropped: what is held may have missed its invalidation. */
  #lapse(): void {
    this.#live = false;
    this.#epoch++;
    this.#forgetAll();
  }

  #forgetAll(): void {
    this.#entries.clear();
    this.#pending.clear();
  }

  /**
   * Sets tracking up once both connections are ready: subscribes the invalidations connection (its id is new
   * after every connect) and redirects the reader's tracking to it. Live only if neither dropped meanwhile.
   */
  async #track(): Promise<void> {
    if (this.#closed || this.#live) return;
    if (this.#reader.status !== 'ready' || this.#invalidations.status !== 'ready') return;
    const epoch = this.#epoch;
    try {
      let redirect = this.#redirect;
      if (redirect === undefined) {
        const drops = this.#invalidationsDrops;
        await this.#invalidations.client('SETNAME', this.#name);
        redirect = String(await this.#invalidations.client('ID'));
        await this.#invalidations.subscribe(INVALIDATIONS);
        if (drops !== this.#invalidationsDrops) return;
        this.#redirect = redirect;
      }
      // Ids count per server: after a Sentinel failover the two connections may be on different servers for a
      // moment, and the id may then be another client's there. Set up at the next reconnect of either then.
      const listed = String(await this.#reader.client('LIST', 'ID', redirect));
      if (!listed.includes(` name=${this.#name} `))
        throw new Error('the invalidations connection is on another server');
      await this.#reader.client('TRACKING', 'ON', 'REDIRECT', redirect, 'OPTIN');
      if (epoch === this.#epoch && !this.#closed) this.#live = true;
    } catch (error) {
      // A connection lost meanwhile sets up again at its reconnect (a command can fail on its gone socket before
      // ioredis reports the drop); a refusal leaves sessions read uncached.
      const dropping = [this.#reader, this.#invalidations].some((c) => c.status !== 'ready' || !c.stream?.writable);
      if (epoch === this.#epoch && !this.#closed && !dropping) {
        this.#onSetUpFailed(error instanceof Error ? error : new Error(String(error)));
      }
    }
  }
}
