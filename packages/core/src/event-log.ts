import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Keys } from './keys.js';

/** One SSE event as logged: its id (what `Last-Event-ID` names) and the JSON-RPC message it carried. */
export interface LoggedEvent {
  readonly id: string;
  readonly data: string;
}

export interface EventLogOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** Approximate number of events kept per stream. */
  readonly maxEvents?: number;
  /** How long a stream's log outlives its last event (ms). */
  readonly retentionMs?: number;
}

/**
 * SSE event logs in Redis Streams, so a client can resume any response or GET stream on any gateway with
 * `Last-Event-ID`. An event id is `<streamId>_<entryId>`: it names its stream, so whichever pod receives
 * the resumption knows which log to replay, and stream ids are random so ids cannot be guessed.
 */
export class EventLog {
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #maxEvents: number;
  readonly #retentionMs: number;

  constructor(options: EventLogOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.#maxEvents = options.maxEvents ?? 1000;
    this.#retentionMs = options.retentionMs ?? 10 * 60 * 1000;
  }

  /** A new stream id (≥128 random bits). */
  static newStreamId(): string {
    return randomBytes(16).toString('base64url');
  }

  /** Splits an event id into its stream id and entry id, or undefined when it is not one of ours. */
  static parseEventId(eventId: string): { streamId: string; entryId: string } | undefined {
    const match = /^([A-Za-z0-9_-]{22})_(\d{1,20}-\d{1,20})$/.exec(eventId);
    return match === null ? undefined : { streamId: match[1] as string, entryId: match[2] as string };
  }

  /** Appends an event and returns its id. */
  async append(streamId: string, data: string): Promise<string> {
    const key = this.#keys.sseStream(streamId);
    const [[, entryId]] = (await this.#redis
      .multi()
      .xadd(key, 'MAXLEN', '~', this.#maxEvents, '*', 'd', data)
      .pexpire(key, this.#retentionMs)
      .exec()) as [[Error | null, string], [Error | null, number]];
    return `${streamId}_${entryId}`;
  }

  /** Events after `entryId` in order, at most `count`; an empty list when the log is gone. */
  async readAfter(streamId: string, entryId: string, count = 1000): Promise<LoggedEvent[]> {
    const rows = await this.#redis.xrange(this.#keys.sseStream(streamId), `(${entryId}`, '+', 'COUNT', count);
    return rows.map(([id, fields]) => ({ id: `${streamId}_${id}`, data: fields[1] ?? '' }));
  }

  /** True while a stream's log exists. */
  async exists(streamId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.sseStream(streamId))) === 1;
  }
}
