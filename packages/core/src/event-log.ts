import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Keys } from './keys.js';
import { ScriptCode } from './script-codes.js';
import { scriptRunner } from './scripts.js';

/** One SSE event as logged: its id (what `Last-Event-ID` names) and its data ('' for a priming event). */
export interface LoggedEvent {
  readonly id: string;
  readonly data: string;
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
  /** The last session-feed entry a `session` stream relayed (where it started, before the first). */
  readonly feedPosition?: string;
}

/** What relaying one outbox entry did. */
export type RelayOutcome =
  | { readonly kind: 'relayed'; readonly eventId?: string }
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
 * `Last-Event-ID`. An event id is `<streamId>_<entryId>`: it names its stream, so whichever pod receives
 * the resumption knows which log to replay; stream ids are random, so ids cannot be guessed. Entry ids are
 * `<ms>-<n>` with n the event's ordinal, so a resumption can tell when events it would need were trimmed.
 *
 * Every append is fenced by the stream's connection lease: the connection that holds it is the stream's
 * one writer, and a resumption on another pod takes the lease over, so a stale connection can write no more.
 */
export class EventLog {
  readonly maxEvents: number;
  readonly retentionMs: number;
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #run: ReturnType<typeof scriptRunner>;

  constructor(options: EventLogOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.maxEvents = options.maxEvents ?? 1000;
    this.retentionMs = options.retentionMs ?? 10 * 60 * 1000;
    this.#run = scriptRunner(options.redis);
  }

  /** A new stream id (128 random bits, 22 base64url characters). */
  static newStreamId(): string {
    return randomBytes(16).toString('base64url');
  }

  /** A new id for one HTTP connection that carries a stream. */
  static newConnectionId(): string {
    return randomBytes(12).toString('base64url');
  }

  /** Splits an event id into its stream id and entry id, or undefined when it is not one of ours. */
  static parseEventId(eventId: string): { streamId: string; entryId: string } | undefined {
    const match = /^([A-Za-z0-9_-]{22})_(\d{1,20}-\d{1,20})$/.exec(eventId);
    return match === null ? undefined : { streamId: match[1] as string, entryId: match[2] as string };
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
   * Appends an event (and sets state fields along: `done`, `feed`); resolves to its event id, or undefined
   * when the connection no longer holds the stream.
   */
  async append(
    streamId: string,
    connectionId: string,
    data: string,
    state: Readonly<Record<string, string>> = {},
  ): Promise<string | undefined> {
    const reply = (await this.#run('appendEvent', this.#streamKeys(streamId), [
      connectionId,
      data,
      this.maxEvents,
      this.retentionMs,
      JSON.stringify(state),
      'event',
    ])) as [number, string?];
    return reply[0] === ScriptCode.Ok ? `${streamId}_${reply[1]}` : undefined;
  }

  /** Sets state fields without an event (e.g. `done` for a response that is not sent); false when fenced. */
  async setState(streamId: string, connectionId: string, state: Readonly<Record<string, string>>): Promise<boolean> {
    const reply = (await this.#run('appendEvent', this.#streamKeys(streamId), [
      connectionId,
      '',
      this.maxEvents,
      this.retentionMs,
      JSON.stringify(state),
      'state',
    ])) as [number];
    return reply[0] === ScriptCode.Ok;
  }

  /** Moves one outbox entry of a task onto the stream, exactly once across all streams (see relayEvent-5.lua). */
  async relay(streamId: string, connectionId: string, input: RelayInput): Promise<RelayOutcome> {
    const reply = (await this.#run(
      'relayEvent',
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
      ],
    )) as [number, string?];
    switch (reply[0]) {
      case ScriptCode.Ok:
        return reply[1] === '' || reply[1] === undefined
          ? { kind: 'relayed' }
          : { kind: 'relayed', eventId: `${streamId}_${reply[1]}` };
      case ScriptCode.Fenced:
        return { kind: 'fenced' };
      case ScriptCode.NotCarrier:
        return { kind: 'not_carrier' };
      default:
        return { kind: 'stale' };
    }
  }

  /** Events after `entryId` in order, at most `count`; an empty list when the log is gone. */
  async readAfter(streamId: string, entryId: string, count = 1000): Promise<LoggedEvent[]> {
    const rows = await this.#redis.xrange(this.#keys.sseStream(streamId), `(${entryId}`, '+', 'COUNT', count);
    return rows.map(([id, fields]) => ({ id: `${streamId}_${id}`, data: fields[1] ?? '' }));
  }

  /**
   * True when every event after `entryId` is still in the log: the next one (if any) is the event right
   * after it (ordinals are consecutive), so a replay from there loses nothing.
   */
  async complete(streamId: string, entryId: string): Promise<boolean> {
    const ordinal = Number(entryId.split('-')[1]);
    const [next] = await this.#redis.xrange(this.#keys.sseStream(streamId), `(${entryId}`, '+', 'COUNT', 1);
    if (next === undefined) {
      const count = Number(await this.#redis.hget(this.#keys.sseState(streamId), 'n'));
      return Number.isSafeInteger(count) && count >= ordinal;
    }
    return Number(next[0].split('-')[1]) === ordinal + 1;
  }

  /** Gives the stream's connection lease to `connectionId`, whoever held it (a resumption). */
  async takeConnection(streamId: string, connectionId: string, leaseMs: number): Promise<void> {
    await this.#run('lease', [this.#keys.sseConnection(streamId)], ['take', connectionId, leaseMs]);
  }

  /** Extends the connection lease; false when another connection took the stream over. */
  async refreshConnection(streamId: string, connectionId: string, leaseMs: number): Promise<boolean> {
    const reply = (await this.#run(
      'lease',
      [this.#keys.sseConnection(streamId)],
      ['refresh', connectionId, leaseMs],
    )) as [number];
    return reply[0] === ScriptCode.Ok;
  }

  /** Gives the connection lease up if `connectionId` still holds it. */
  async releaseConnection(streamId: string, connectionId: string): Promise<void> {
    await this.#run('lease', [this.#keys.sseConnection(streamId)], ['release', connectionId, 0]);
  }

  /** True while `connectionId` holds the stream's connection lease. */
  async holdsConnection(streamId: string, connectionId: string): Promise<boolean> {
    return (await this.#redis.get(this.#keys.sseConnection(streamId))) === connectionId;
  }

  /** True while some connection carries the stream. */
  async connected(streamId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.sseConnection(streamId))) === 1;
  }

  #streamKeys(streamId: string): string[] {
    return [this.#keys.sseStream(streamId), this.#keys.sseConnection(streamId), this.#keys.sseState(streamId)];
  }
}
