import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';
import { Scripts } from '../redis/script-replies.js';
import { compareEntryIds } from './task-delivery.js';

/** One SSE event as logged: its id (what `Last-Event-ID` names) and its data ('' for a priming event). */
export interface LoggedEvent {
  /** `<streamId>_<entryId>`: the event's id on a tasks/result or direct-call stream. */
  readonly id: string;
  /** Its entry id in the stream's log (`<ms>-<n>`). */
  readonly entryId: string;
  readonly data: string;
  /** On a session's GET stream: the session-feed position the stream had processed when it wrote the event. */
  readonly feed?: string;
}

/** What an event id names: a stream, a position in its log and, on a session's GET stream, in the session's feed. */
export interface EventPosition {
  readonly streamId: string;
  /** The stream's last log entry at or before the event (`0-0` before the first). */
  readonly entryId: string;
  /** Session streams: the last session-feed entry the stream had processed at the event. */
  readonly feedEntryId?: string;
}

/** What an SSE stream carries: the session's GET stream, a tasks/result response, or a direct call's response. */
export type StreamKind = 'session' | 'result' | 'direct';

/** What a stream is, so that any pod can continue it after a resumption. */
export interface StreamState {
  readonly streamId: string;
  readonly kind: StreamKind;
  /** Digest of the session the stream belongs to (`Keys.digest`): only that session may resume it. */
  readonly session: string;
  /** The task whose messages and result a `result` or `direct` stream carries. */
  readonly taskId?: string;
  /** The JSON-RPC id of the request a `result` or `direct` stream answers. */
  readonly rpcId?: string | number;
  /** True once the stream's last event (the response) is logged: nothing more will follow. */
  readonly done: boolean;
  /**
   * A `session` stream's feed position for its `<streamId>_<entryId>` ids: the feed head it started from,
   * which its priming event stands at (set once at creation; the stream's other events carry their feed
   * position in their ids). Gateways before feed-positioned ids moved it with every status notification.
   */
  readonly feedPosition?: string;
}

/** What relaying one outbox entry did. */
export type RelayReport =
  | { readonly kind: 'relayed'; readonly eventId?: string; readonly entryId?: string }
  | { readonly kind: 'fenced' | 'not_carrier' | 'stale' };

/** One outbox entry to relay onto a stream (see `EventLog.relay`). */
export interface RelayInput {
  readonly taskId: string;
  /** `carrier`: the stream carries the task; `fallback`: the GET stream, while no stream carries it. */
  readonly mode: 'carrier' | 'fallback';
  readonly entryId: string;
  /** The JSON-RPC message, or undefined to pass the entry over (e.g. a log below the session's level). */
  readonly data: string | undefined;
  /** The task's expiry (unix ms): its relay state lives as long. */
  readonly expiresAt: number;
  /** The input request id when the entry is one. */
  readonly requestId?: string;
  /** A session stream's feed position, to store with the event (see `EventLog.append`). */
  readonly feedPosition?: string;
}

export interface EventLogOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** Approximate number of events kept per stream. Default 1000. */
  readonly maxEvents?: number;
  /** Events older than this are trimmed, and a stream's log expires this long after its last event (ms). Default 10 min. */
  readonly retentionMs?: number;
}

/**
 * SSE event logs in Redis Streams, so a client can resume any response or GET stream on any gateway with
 * `Last-Event-ID`. An event id names its stream first, so whichever pod receives the resumption knows which
 * log to replay; stream ids are random, so ids cannot be guessed. Entry ids are `<ms>-<n>` with n the
 * event's ordinal, so a resumption can tell when events it would need were trimmed.
 *
 * - tasks/result and direct-call streams log every event: `<streamId>_<entryId>`.
 * - a session's GET stream logs everything but its status notifications, which its session's feed holds
 *   already: `<streamId>_<entryId>_<feedEntryId>`, where entryId is the last event the stream logged at or
 *   before this one (`0-0` before the first) and feedEntryId the last feed entry it had processed. Logged
 *   events store that feed position with them (field `f`), so a replay interleaves the feed's status
 *   notifications where they went out, under the same ids. Its priming event keeps `<streamId>_<entryId>`:
 *   its feed position is the one in the stream's state (`StreamState.feedPosition`).
 *
 * Every append is fenced by the stream's connection lease: the connection that holds it is the stream's
 * one writer, and a resumption on another pod takes the lease over, so a stale connection can write no more.
 */
export class EventLog {
  readonly maxEvents: number;
  readonly retentionMs: number;
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #scripts: Scripts;

  constructor(options: EventLogOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.maxEvents = options.maxEvents ?? 1000;
    this.retentionMs = options.retentionMs ?? 10 * 60 * 1000;
    this.#scripts = new Scripts(options.redis);
  }

  /** A new stream id of a session: the session's slot tag, then 128 random bits (26 base64url characters). */
  static newStreamId(sessionId: string): string {
    return `${Keys.slotTag(sessionId)}${randomBytes(16).toString('base64url')}`;
  }

  /** A new id for one HTTP connection that carries a stream. */
  static newConnectionId(): string {
    return randomBytes(12).toString('base64url');
  }

  /** An event id: `<streamId>_<entryId>`, or `<streamId>_<entryId>_<feedEntryId>` on a session stream. */
  static eventId(streamId: string, entryId: string, feedEntryId?: string): string {
    return feedEntryId === undefined ? `${streamId}_${entryId}` : `${streamId}_${entryId}_${feedEntryId}`;
  }

  /** Splits an event id into what it names (see `eventId`), or undefined when it is not one of ours. */
  static parseEventId(eventId: string): EventPosition | undefined {
    const match = /^([A-Za-z0-9_-]{26})_(\d{1,20}-\d{1,20})(?:_(\d{1,20}-\d{1,20}))?$/.exec(eventId);
    if (match === null) return undefined;
    const [, streamId = '', entryId = '', feedEntryId] = match;
    return { streamId, entryId, ...(feedEntryId !== undefined && { feedEntryId }) };
  }

  /** Records a new stream and gives its connection lease to `connectionId`. */
  async create(state: Omit<StreamState, 'done'>, connectionId: string, leaseMs: number): Promise<void> {
    const key = this.#keys.sseState(state.streamId);
    const fields: Record<string, string> = {
      kind: state.kind,
      session: state.session,
      ...(state.taskId !== undefined && { taskId: state.taskId }),
      ...(state.rpcId !== undefined && { rpcId: JSON.stringify(state.rpcId) }),
      ...(state.feedPosition !== undefined && { feed: state.feedPosition }),
    };
    await this.#redis
      .multi()
      .hset(key, fields)
      .pexpire(key, this.retentionMs)
      .set(this.#keys.sseConnection(state.streamId), connectionId, 'PX', leaseMs)
      .exec();
  }

  /** A stream's state, or undefined when it is unknown or its log expired. */
  async state(streamId: string): Promise<StreamState | undefined> {
    const fields = await this.#redis.hgetall(this.#keys.sseState(streamId));
    const kind = fields.kind;
    if ((kind !== 'session' && kind !== 'result' && kind !== 'direct') || fields.session === undefined)
      return undefined;
    return {
      streamId,
      kind,
      session: fields.session,
      ...(fields.taskId !== undefined && { taskId: fields.taskId }),
      ...(fields.rpcId !== undefined && { rpcId: JSON.parse(fields.rpcId) as string | number }),
      done: fields.done === '1',
      ...(fields.feed !== undefined && { feedPosition: fields.feed }),
    };
  }

  /**
   * Appends an event (and sets state fields along, e.g. `done`), storing `feedPosition` with it when given
   * (a session stream); resolves to its `<streamId>_<entryId>` id, or undefined when the connection no
   * longer holds the stream.
   */
  async append(
    streamId: string,
    connectionId: string,
    data: string,
    state: Readonly<Record<string, string>> = {},
    feedPosition?: string,
  ): Promise<string | undefined> {
    const reply = await this.#scripts.appendEvent(this.#streamKeys(streamId), [
      connectionId,
      data,
      this.maxEvents,
      this.retentionMs,
      JSON.stringify(state),
      'event',
      feedPosition ?? '',
    ]);
    return reply.kind === 'appended' ? EventLog.eventId(streamId, reply.entryId) : undefined;
  }

  /**
   * Ends a tasks/result or direct-call stream of a terminal task in one script (finishStream-4.lua): logs its
   * last event (`data`; undefined for none) with `state`, gives the connection lease up and the task's carrier
   * lease too when this stream holds it. Resolves to the event's entry id ('' without an event), or undefined
   * when the connection no longer holds the stream (then nothing changed).
   */
  async finish(
    streamId: string,
    connectionId: string,
    taskId: string,
    data: string | undefined,
    state: Readonly<Record<string, string>>,
  ): Promise<string | undefined> {
    const reply = await this.#scripts.finishStream(
      [...this.#streamKeys(streamId), this.#keys.taskCarrier(taskId)],
      [
        connectionId,
        data ?? '',
        this.maxEvents,
        this.retentionMs,
        JSON.stringify(state),
        data === undefined ? 'state' : 'event',
        streamId,
      ],
    );
    return reply.kind === 'appended' ? reply.entryId : undefined;
  }

  /** Sets state fields without an event (e.g. `done` for a response that is not sent); false when fenced. */
  async setState(streamId: string, connectionId: string, state: Readonly<Record<string, string>>): Promise<boolean> {
    const reply = await this.#scripts.appendEvent(this.#streamKeys(streamId), [
      connectionId,
      '',
      this.maxEvents,
      this.retentionMs,
      JSON.stringify(state),
      'state',
    ]);
    return reply.kind === 'appended';
  }

  /**
   * Extends the connection lease, and the log and state by the retention, without an event: a session
   * stream, whose status notifications are not logged, stays resumable while it is connected. False when
   * another connection took the stream over.
   */
  async keepAlive(streamId: string, connectionId: string, leaseMs: number): Promise<boolean> {
    const reply = await this.#scripts.appendEvent(this.#streamKeys(streamId), [
      connectionId,
      '',
      this.maxEvents,
      this.retentionMs,
      '{}',
      'touch',
      '',
      leaseMs,
    ]);
    return reply.kind === 'appended';
  }

  /**
   * Moves one outbox entry of a task onto the stream, exactly once across all streams (see relayEvent-5.lua).
   * `input.feedPosition` is stored with the event (the session stream's position in its feed).
   */
  async relay(streamId: string, connectionId: string, input: RelayInput): Promise<RelayReport> {
    const reply = await this.#scripts.relayEvent(
      [...this.#streamKeys(streamId), this.#keys.taskCarrier(input.taskId), this.#keys.taskRelay(input.taskId)],
      [
        connectionId,
        streamId,
        input.mode,
        input.entryId,
        input.data ?? '',
        this.maxEvents,
        this.retentionMs,
        input.expiresAt,
        input.requestId ?? '',
        input.feedPosition ?? '',
      ],
    );
    if (reply.kind !== 'relayed') return reply;
    return reply.entryId === ''
      ? { kind: 'relayed' }
      : { kind: 'relayed', eventId: EventLog.eventId(streamId, reply.entryId), entryId: reply.entryId };
  }

  /** Events after `entryId` in order, at most `count`; an empty list when the log is gone. */
  async readAfter(streamId: string, entryId: string, count = 1000): Promise<LoggedEvent[]> {
    const rows = await this.#redis.xrange(this.#keys.sseStream(streamId), `(${entryId}`, '+', 'COUNT', count);
    if (rows.length === 0) {
      const kept = await this.#keptEvent(streamId);
      if (kept === undefined || compareEntryIds(kept.entryId, entryId) <= 0) return [];
      return [{ id: EventLog.eventId(streamId, kept.entryId), ...kept }];
    }
    return rows.map(([id, fields]) => {
      const values = new Map<string, string>();
      for (let i = 0; i + 1 < fields.length; i += 2) values.set(fields[i] as string, fields[i + 1] as string);
      const feed = values.get('f');
      return {
        id: EventLog.eventId(streamId, id),
        entryId: id,
        data: values.get('d') ?? '',
        ...(feed !== undefined && { feed }),
      };
    });
  }

  /**
   * True when every event after `entryId` is still in the log: the next one (if any) is the event right
   * after it (ordinals are consecutive), or, when none is left, `entryId` was the last one logged; so a
   * replay from there loses nothing. `0-0` names the position before a stream's first logged event.
   */
  async complete(streamId: string, entryId: string): Promise<boolean> {
    const ordinal = Number(entryId.split('-')[1]);
    const [next] = await this.#redis.xrange(this.#keys.sseStream(streamId), `(${entryId}`, '+', 'COUNT', 1);
    if (next === undefined) {
      const [n, kept] = await this.#redis.hmget(this.#keys.sseState(streamId), 'n', 'fid');
      if (kept != null && compareEntryIds(kept, entryId) > 0) return Number(kept.split('-')[1]) === ordinal + 1;
      const count = Number(n);
      return Number.isSafeInteger(count) && count === ordinal;
    }
    return Number(next[0].split('-')[1]) === ordinal + 1;
  }

  /** Gives the stream's connection lease to `connectionId`, whoever held it (a resumption). */
  async takeConnection(streamId: string, connectionId: string, leaseMs: number): Promise<void> {
    await this.#scripts.lease([this.#keys.sseConnection(streamId)], ['take', connectionId, leaseMs]);
  }

  /** Extends the connection lease; false when another connection took the stream over. */
  async refreshConnection(streamId: string, connectionId: string, leaseMs: number): Promise<boolean> {
    const reply = await this.#scripts.lease([this.#keys.sseConnection(streamId)], ['refresh', connectionId, leaseMs]);
    return reply.kind === 'ok';
  }

  /** Gives the connection lease up if `connectionId` still holds it. */
  async releaseConnection(streamId: string, connectionId: string): Promise<void> {
    await this.#scripts.lease([this.#keys.sseConnection(streamId)], ['release', connectionId, 0]);
  }

  /** True while `connectionId` holds the stream's connection lease. */
  async holdsConnection(streamId: string, connectionId: string): Promise<boolean> {
    return (await this.#redis.get(this.#keys.sseConnection(streamId))) === connectionId;
  }

  /** True while some connection carries the stream. */
  async connected(streamId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.sseConnection(streamId))) === 1;
  }

  /**
   * The event a stream keeps in its state instead of a log (its first and last, see finishStream-4.lua), if
   * it has one.
   */
  async #keptEvent(streamId: string): Promise<{ entryId: string; data: string } | undefined> {
    // Buffers: a piece may end inside a UTF-8 sequence that the next one completes.
    const fields = await this.#redis.hgetallBuffer(this.#keys.sseState(streamId));
    const entryId = fields.fid?.toString();
    if (entryId === undefined) return undefined;
    // One field: data too long for pieces, or a state an earlier version wrote.
    if (fields.fd !== undefined) return { entryId, data: fields.fd.toString() };
    const count = Number(fields.fc?.toString());
    if (!Number.isSafeInteger(count)) return undefined;
    const pieces: Buffer[] = [];
    for (let i = 1; i <= count; i++) {
      const piece = fields[`fd${i}`];
      if (piece === undefined) return undefined;
      pieces.push(piece);
    }
    return { entryId, data: Buffer.concat(pieces).toString() };
  }

  #streamKeys(streamId: string): [string, string, string] {
    return [this.#keys.sseStream(streamId), this.#keys.sseConnection(streamId), this.#keys.sseState(streamId)];
  }
}
