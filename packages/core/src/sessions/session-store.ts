import { randomBytes } from 'node:crypto';
import { type LoggingLevel, LoggingLevelSchema } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { sessionLimitExceeded, TaskgateError } from '../errors.js';
import { shardPublishCommand } from '../redis/connection.js';
import { Keys } from '../redis/keys.js';
import { pipelineValues } from '../redis/pipeline-replies.js';
import { Scripts } from '../redis/script-replies.js';
import { randomSlotTag } from '../tasks/ids.js';
import type { SessionCache } from './session-cache.js';

/**
 * A new MCP session id: the slot tag of its owner (the principal's, or a random one when auth is off), a dot,
 * 256 random bits, base64url (visible ASCII only, as Streamable HTTP requires).
 */
export function newSessionId(principal?: string): string {
  const tag = principal === undefined ? randomSlotTag() : Keys.slotTag(principal);
  return `${tag}.${randomBytes(32).toString('base64url')}`;
}

/** True when a header value could be a session id we issued (cheap rejection before Redis). */
export function isSessionIdShape(value: string): boolean {
  return /^[A-Za-z0-9_-]{4}\.[A-Za-z0-9_-]{43}$/.test(value);
}

/** One MCP session as Redis holds it. */
export interface SessionRecord {
  readonly sessionId: string;
  /** Digest of the principal the session belongs to (`Keys.digest`); absent when auth is off. */
  readonly principalId?: string;
  /** The protocol revision negotiated at initialize. */
  readonly protocolVersion: string;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo?: Record<string, unknown>;
  /** Least severe log level the client wants (`logging/setLevel`); absent until it asks. */
  readonly logLevel?: LoggingLevel;
  /** ms since the epoch. */
  readonly createdAt: number;
}

export interface CreateSessionInput {
  /** The authenticated principal; the session is bound to it. Absent when auth is off. */
  readonly principal?: string;
  readonly protocolVersion: string;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo?: Record<string, unknown>;
}

export interface SessionStoreOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** A session ends after this long without a request or an open GET stream (ms, sliding). */
  readonly idleTtlMs: number;
  /**
   * Sessions one principal may have at once, across every gateway (0 = unlimited, the default); `create`
   * refuses more with -32011. Sessions without a principal (auth off) are not counted.
   */
  readonly maxPerPrincipal?: number;
  /** Where session hashes are kept between requests (`SessionCache`); without it each request reads Redis. */
  readonly cache?: SessionCache;
}

/** What a stream lease operation found. */
export type LeaseResult = 'ok' | 'session_gone' | 'held_elsewhere';

/**
 * MCP sessions in Redis, so that any gateway answers any request of any session: one hash per session with a
 * sliding idle expiry, keyed by a digest of the id. `end` publishes on the session's channel so that its
 * GET stream closes on whichever gateway holds it.
 */
export class SessionStore {
  readonly idleTtlMs: number;
  readonly maxPerPrincipal: number;
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #scripts: Scripts;
  readonly #cache: SessionCache | undefined;
  /** When this process last pushed each session's expiry back (ms), so busy sessions are not refreshed per request. */
  readonly #refreshed = new Map<string, number>();
  readonly #refreshEveryMs: number;
  /** When this process last pushed each session's entry in its principal's index back (ms), for GET streams. */
  readonly #indexed = new Map<string, number>();

  constructor(options: SessionStoreOptions) {
    if (!Number.isSafeInteger(options.idleTtlMs) || options.idleTtlMs <= 0) {
      throw new TaskgateError('INVALID_CONFIG', `idleTtlMs must be a positive integer, got ${options.idleTtlMs}`);
    }
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.idleTtlMs = options.idleTtlMs;
    this.maxPerPrincipal = options.maxPerPrincipal ?? 0;
    if (!Number.isSafeInteger(this.maxPerPrincipal) || this.maxPerPrincipal < 0) {
      throw new TaskgateError(
        'INVALID_CONFIG',
        `maxPerPrincipal must be a non-negative integer, got ${options.maxPerPrincipal}`,
      );
    }
    this.#refreshEveryMs = Math.min(60_000, Math.floor(options.idleTtlMs / 10));
    this.#scripts = new Scripts(options.redis);
    this.#cache = options.cache;
  }

  /**
   * Stores a new session and returns it. With a per-principal limit, a principal's sessions are indexed (one
   * script: prune, count, store) and one more than the limit is refused with -32011 (`data.limit`).
   */
  async create(input: CreateSessionInput): Promise<SessionRecord> {
    const record: SessionRecord = {
      sessionId: newSessionId(input.principal),
      ...(input.principal !== undefined && { principalId: Keys.digest(input.principal) }),
      protocolVersion: input.protocolVersion,
      clientCapabilities: input.clientCapabilities,
      ...(input.clientInfo !== undefined && { clientInfo: input.clientInfo }),
      createdAt: Date.now(),
    };
    const key = this.#keys.session(record.sessionId);
    const fields: Record<string, string> = {
      protocolVersion: record.protocolVersion,
      clientCapabilities: JSON.stringify(record.clientCapabilities),
      createdAt: String(record.createdAt),
      ...(record.principalId !== undefined && { principal: record.principalId }),
      ...(record.clientInfo !== undefined && { clientInfo: JSON.stringify(record.clientInfo) }),
    };
    if (input.principal !== undefined && this.maxPerPrincipal > 0) {
      const index = this.#index(record.sessionId, record.principalId as string);
      const reply = await this.#scripts.createSession(
        [key, index],
        [Keys.digest(record.sessionId), this.idleTtlMs, this.maxPerPrincipal, JSON.stringify(fields)],
      );
      if (reply.kind === 'limit') throw sessionLimitExceeded(this.maxPerPrincipal);
      return record;
    }
    await this.#redis.multi().hset(key, fields).pexpire(key, this.idleTtlMs).exec();
    return record;
  }

  /**
   * The index of the sessions of a principal, from one of its session ids and the principal's digest (a
   * session id carries its principal's slot tag, so the index is in the session's slot).
   */
  #index(sessionId: string, principalId: string): string {
    return this.#keys.ownerSessions(`${Keys.tagOf(sessionId)}${principalId}`);
  }

  /** Adds the commands that push a session's index entry back to its idle expiry (the index follows). */
  #touchIndex(pipeline: ReturnType<Redis['pipeline']>, sessionId: string, principalId: string): void {
    const index = this.#index(sessionId, principalId);
    pipeline
      .zadd(index, 'XX', 'GT', Date.now() + this.idleTtlMs, Keys.digest(sessionId))
      .pexpire(index, this.idleTtlMs);
  }

  /**
   * The session, with its idle expiry pushed back (one round trip); undefined when unknown or ended. A busy
   * session's expiry is pushed back at most every tenth of the idle ttl (60 s at most) per process, so the
   * idle ttl a session gets is between 90 % and 100 % of the configured one. `principal` (the caller's) pushes
   * the session's entry in that principal's index back with it; a session of another principal has none there.
   */
  async get(sessionId: string, principal?: string): Promise<SessionRecord | undefined> {
    if (!isSessionIdShape(sessionId)) return undefined;
    const key = this.#keys.session(sessionId);
    const now = Date.now();
    let fields: Record<string, string>;
    if (now - (this.#refreshed.get(key) ?? 0) < this.#refreshEveryMs) {
      fields = await (this.#cache?.read(key) ?? this.#redis.hgetall(key));
    } else {
      const pipeline = this.#redis.pipeline().hgetall(key).pexpire(key, this.idleTtlMs);
      // Only the caller's own index, in the session's slot (a pipeline stays in one slot).
      if (principal !== undefined && this.maxPerPrincipal > 0 && Keys.slotTag(principal) === Keys.tagOf(sessionId)) {
        this.#touchIndex(pipeline, sessionId, Keys.digest(principal));
      }
      // A read that failed (Redis restarting, a connection lost) is that failure, not an unknown session: the
      // client would drop a live session on a 404.
      fields = pipelineValues(await pipeline.exec(), 1)[0] as Record<string, string>;
      if (this.#refreshed.size >= 10_000) this.#refreshed.clear();
      if (fields.protocolVersion !== undefined) this.#refreshed.set(key, now);
    }
    // A hash without protocolVersion is a remnant of a write racing `end`; it expires on its own.
    if (fields.protocolVersion === undefined) return undefined;
    // Most sessions never set a level: no parse (and no failed parse's error object) per request then.
    const level = fields.logLevel === undefined ? undefined : LoggingLevelSchema.safeParse(fields.logLevel);
    return {
      sessionId,
      ...(fields.principal !== undefined && { principalId: fields.principal }),
      protocolVersion: fields.protocolVersion,
      clientCapabilities: parseObject(fields.clientCapabilities) ?? {},
      ...(fields.clientInfo !== undefined && { clientInfo: parseObject(fields.clientInfo) ?? {} }),
      ...(level?.success === true && { logLevel: level.data }),
      createdAt: Number(fields.createdAt ?? 0),
    };
  }

  /** True when `principal` may use the session: the one it was created by, or none for both when auth is off. */
  static belongsTo(session: SessionRecord, principal: string | undefined): boolean {
    const principalId = principal === undefined ? undefined : Keys.digest(principal);
    return session.principalId === principalId;
  }

  /** Records the log level the client asked for. */
  async setLogLevel(sessionId: string, level: LoggingLevel): Promise<void> {
    const key = this.#keys.session(sessionId);
    await this.#redis.multi().hset(key, 'logLevel', level).pexpire(key, this.idleTtlMs).exec();
    this.#cache?.forget(key);
  }

  /** The log level the client asked for (`logging/setLevel`), without touching the session's expiry. */
  async logLevel(sessionId: string): Promise<LoggingLevel | undefined> {
    const level = LoggingLevelSchema.safeParse(await this.#redis.hget(this.#keys.session(sessionId), 'logLevel'));
    return level.success ? level.data : undefined;
  }

  /**
   * Ends a session (later requests with its id get 404) and tells its GET stream to close; `principalId` (the
   * record's) takes it out of its principal's index at once.
   */
  async end(sessionId: string, principalId?: string): Promise<boolean> {
    const key = this.#keys.session(sessionId);
    this.#refreshed.delete(key);
    this.#indexed.delete(key);
    const multi = this.#redis.multi();
    if (principalId !== undefined) multi.zrem(this.#index(sessionId, principalId), Keys.digest(sessionId));
    const replies = await multi
      .del(this.#keys.session(sessionId))
      .del(this.#keys.sessionStream(sessionId))
      .del(this.#keys.sessionFeed(sessionId))
      [shardPublishCommand(this.#redis)](this.#keys.sessionChannel(sessionId), SESSION_ENDED)
      .exec();
    // A read of this process may have kept the session while the delete was on its way; Redis's message for it
    // comes on another connection, maybe after the next request.
    this.#cache?.forget(key);
    return replies?.[principalId === undefined ? 0 : 1]?.[1] === 1;
  }

  /** Tells the session's channel that its GET stream was resumed, so a stale connection elsewhere stops at once. */
  async announceStreamResumed(sessionId: string): Promise<void> {
    await this.#redis[shardPublishCommand(this.#redis)](this.#keys.sessionChannel(sessionId), STREAM_RESUMED);
  }

  /**
   * Claims the session's GET-stream lease for `streamId` (refused while another stream holds it). The lease
   * keeps the session alive; with `principalId` (the record's) its entry in the principal's index too, pushed
   * back at most every tenth of the idle ttl.
   */
  async claimStream(sessionId: string, streamId: string, leaseMs: number, principalId?: string): Promise<LeaseResult> {
    const result = await this.#lease('claim', sessionId, streamId, leaseMs);
    const key = this.#keys.session(sessionId);
    const now = Date.now();
    if (result === 'ok' && principalId !== undefined && this.maxPerPrincipal > 0) {
      if (now - (this.#indexed.get(key) ?? 0) >= this.#refreshEveryMs) {
        const pipeline = this.#redis.pipeline();
        this.#touchIndex(pipeline, sessionId, principalId);
        await pipeline.exec();
        if (this.#indexed.size >= 10_000) this.#indexed.clear();
        this.#indexed.set(key, now);
      }
    }
    return result;
  }

  /** Extends a lease this stream holds, and the session's idle expiry with it. */
  refreshStream(sessionId: string, streamId: string, leaseMs: number): Promise<LeaseResult> {
    return this.#lease('refresh', sessionId, streamId, leaseMs);
  }

  /** Gives the lease up if this stream still holds it. */
  async releaseStream(sessionId: string, streamId: string): Promise<void> {
    await this.#lease('release', sessionId, streamId, 0);
  }

  async #lease(op: string, sessionId: string, streamId: string, leaseMs: number): Promise<LeaseResult> {
    const keys: [string, string, string] = [
      this.#keys.sessionStream(sessionId),
      this.#keys.session(sessionId),
      this.#keys.sessionFeed(sessionId),
    ];
    const reply = await this.#scripts.streamLease(keys, [op, streamId, leaseMs, this.idleTtlMs]);
    if (reply.kind === 'ok') return 'ok';
    return reply.kind === 'not_found' ? 'session_gone' : 'held_elsewhere';
  }
}

/** What `end` publishes on a session's channel (task snapshots there are JSON objects with a taskId). */
export const SESSION_ENDED = '{"sessionEnded":true}';

/** What `announceStreamResumed` publishes on a session's channel. */
export const STREAM_RESUMED = '{"streamResumed":true}';

function parseObject(raw: string | undefined): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
