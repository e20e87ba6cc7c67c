import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';
import { Scripts } from '../redis/script-replies.js';
import { TaskSessionKeys } from '../tasks/task-session-keys.js';

/**
 * The server-to-client requests a task sends: input requests, and the requests that follow a client task
 * (CLT-1: `tasks/get`, `tasks/result`, `tasks/cancel` of the task the client made of an input request).
 */
export type OutboxRequestMethod =
  | 'elicitation/create'
  | 'sampling/createMessage'
  | 'roots/list'
  | 'tasks/get'
  | 'tasks/result'
  | 'tasks/cancel';

/**
 * The input requests a tool asked in one event-loop turn (a `Promise.all` of questions): their shared id and
 * how many they were when this one was posted. A 2026-07-28 input round goes out once all of them are posted.
 */
export interface AskedTogether {
  readonly id: string;
  readonly of: number;
}

/** A server-to-client message produced while a task runs, waiting for a stream to deliver it. */
export type OutboxMessage =
  | { readonly type: 'progress'; readonly progress: number; readonly total?: number; readonly message?: string }
  | { readonly type: 'log'; readonly level: string; readonly logger?: string; readonly data: unknown }
  | {
      readonly type: 'request';
      /** Also the JSON-RPC id the client answers with. */
      readonly requestId: string;
      readonly method: OutboxRequestMethod;
      readonly params: Record<string, unknown>;
      /** The request's key among the `inputRequests` of revision 2026-07-28, when the tool chose one. */
      readonly key?: string;
      /** The requests asked in the same turn as this one (absent: written by an earlier version). */
      readonly together?: AskedTogether;
    };

export interface OutboxEntry {
  /** Stream entry id: order and resume position. */
  readonly id: string;
  readonly message: OutboxMessage;
}

export interface TaskOutboxOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** Approximate number of entries a task's outbox keeps (older ones are trimmed). */
  readonly maxEntries?: number;
}

/**
 * Each task's outbox: a Redis stream of progress, log messages and input requests, in order, that any
 * gateway can relay from any position. Appends are announced on the task's channel (the entry id) and, while no
 * stream carries the task, on its session's feed.
 */
export class TaskOutbox {
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #scripts: Scripts;
  readonly #maxEntries: number;
  readonly #sessionKeys: TaskSessionKeys;

  constructor(options: TaskOutboxOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.#scripts = new Scripts(options.redis);
    this.#maxEntries = options.maxEntries ?? 1000;
    this.#sessionKeys = new TaskSessionKeys(options.redis, this.#keys);
  }

  /**
   * Appends a message; resolves to its entry id, or undefined when the task no longer exists. Exactly once
   * even when the connection resends the command after a reset (the append's random id is recognised).
   */
  async append(taskId: string, message: OutboxMessage): Promise<string | undefined> {
    const keys = this.#keys;
    const appendId = randomBytes(9).toString('base64url');
    const reply = await this.#sessionKeys.run(taskId, ([feed, channel]) =>
      this.#scripts.appendOutbox(
        [keys.task(taskId), keys.taskOutbox(taskId), keys.taskCarrier(taskId), keys.taskChannel(taskId), feed, channel],
        [JSON.stringify(message), this.#maxEntries, taskId, appendId],
      ),
    );
    return reply.kind === 'appended' ? reply.entryId : undefined;
  }

  /** Whether the task's outbox holds any entry (it never shrinks while the task lives). */
  async hasEntries(taskId: string): Promise<boolean> {
    return (await this.#redis.exists(this.#keys.taskOutbox(taskId))) === 1;
  }

  /** Entries from `startId` through `endId` (inclusive, `-` / `+` for the ends), oldest first, at most `count`. */
  async range(taskId: string, startId: string, endId: string, count = 1000): Promise<OutboxEntry[]> {
    const rows = await this.#redis.xrange(this.#keys.taskOutbox(taskId), startId, endId, 'COUNT', count);
    return rows.map(([id, fields]) => ({ id, message: JSON.parse(fields[1] ?? 'null') as OutboxMessage }));
  }

  /** Entries after `afterId` ('0' for all), oldest first, at most `count`. */
  async read(taskId: string, afterId = '0', count = 100): Promise<OutboxEntry[]> {
    const rows = await this.#redis.xrange(this.#keys.taskOutbox(taskId), `(${afterId}`, '+', 'COUNT', count);
    return rows.map(([id, fields]) => ({ id, message: JSON.parse(fields[1] ?? 'null') as OutboxMessage }));
  }
}
