import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { removeJobIfWaiting } from '../queues/tool-queues.js';
import { createRedisConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/redis-close.js';

/** Where an existing BullMQ queue lives: its Redis, key prefix and name. */
export interface ExistingQueueAddress {
  readonly url: string;
  readonly prefix: string;
  readonly name: string;
}

/** What the bridge reads of a job of an existing queue. */
export type ExistingJobState =
  | { readonly state: 'missing' }
  | { readonly state: 'completed'; readonly returnvalue: unknown; readonly finishedOn?: number }
  | { readonly state: 'failed'; readonly failedReason: string; readonly finishedOn?: number }
  | { readonly state: 'active' | 'waiting' | 'delayed' | 'other'; readonly progress: unknown };

/** Fields every entry of a queue's event stream carries: its stream id, when it was written, the job's id. */
interface EventBase {
  readonly id: string;
  readonly eventMs: number;
  /** '' for events of the queue itself (`drained`...). */
  readonly jobId: string;
}

/** One entry of an existing queue's event stream (`<prefix>:<queue>:events`), as BullMQ wrote it. */
export type ExistingQueueEvent = EventBase &
  (
    | { readonly kind: 'progress'; readonly data: unknown }
    | { readonly kind: 'active' }
    | { readonly kind: 'completed'; readonly returnvalue: unknown }
    | { readonly kind: 'failed'; readonly failedReason: string }
    | { readonly kind: 'removed' }
    | { readonly kind: 'other'; readonly event: string }
  );

/** The first and the newest entry ids of an event stream (both undefined when it is empty or absent). */
export interface EventStreamEnds {
  readonly first?: string;
  readonly last?: string;
  /** How many entries were ever trimmed or deleted from the stream (`entries-added` − `length`); 0 when none. */
  readonly removed: number;
}

/** The time part of a Redis stream entry id (`<ms>-<n>`). */
export function streamEntryTime(id: string): number {
  const ms = Number.parseInt(id, 10);
  return Number.isFinite(ms) ? ms : Date.now();
}

function parsed(text: string | undefined): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function eventOf(id: string, flat: readonly string[]): ExistingQueueEvent {
  const fields = new Map<string, string>();
  for (let i = 0; i + 1 < flat.length; i += 2) fields.set(flat[i] as string, flat[i + 1] as string);
  const base = { id, eventMs: streamEntryTime(id), jobId: fields.get('jobId') ?? '' };
  const event = fields.get('event') ?? '';
  if (event === 'progress') return { ...base, kind: 'progress', data: parsed(fields.get('data')) };
  if (event === 'active') return { ...base, kind: 'active' };
  if (event === 'completed') return { ...base, kind: 'completed', returnvalue: parsed(fields.get('returnvalue')) };
  if (event === 'failed')
    return { ...base, kind: 'failed', failedReason: fields.get('failedReason') ?? 'the job failed' };
  if (event === 'removed') return { ...base, kind: 'removed' };
  return { ...base, kind: 'other', event };
}

type StreamReply = [key: string, entries: [id: string, fields: string[]][]][] | null;

/**
 * One existing BullMQ queue, as the bridge uses it: adds jobs (job id = the task id, so adding twice adds
 * nothing), reads a job's state, reads the queue's event stream from a given entry (XREAD on a connection
 * of its own, since it blocks) and removes a job that has not started. The queue's own workers are never
 * touched.
 */
export class ExistingQueue {
  readonly address: ExistingQueueAddress;
  readonly #connection: Redis;
  /** XREAD BLOCK holds its connection: one of its own. */
  readonly #eventsConnection: Redis;
  readonly #queue: Queue;
  readonly #eventsKey: string;

  constructor(address: ExistingQueueAddress, onError: (error: Error) => void) {
    this.address = address;
    this.#connection = createRedisConnection(address.url, 'bullmq-worker', onError);
    this.#queue = new Queue(address.name, { connection: this.#connection, prefix: address.prefix });
    this.#queue.on('error', onError);
    this.#eventsConnection = createRedisConnection(address.url, 'bullmq-worker', onError);
    this.#eventsKey = `${address.prefix}:${address.name}:events`;
  }

  /** Resolves once the queue and the event stream's connection are connected. */
  async ready(): Promise<void> {
    await Promise.all([this.#queue.waitUntilReady(), this.#eventsConnection.ping()]);
  }

  /** Up to `count` entries of the event stream after entry `after`, waiting at most `blockMs` for one. */
  async readEvents(after: string, count: number, blockMs: number): Promise<ExistingQueueEvent[]> {
    const reply = (await this.#eventsConnection.xread(
      'COUNT',
      count,
      'BLOCK',
      blockMs,
      'STREAMS',
      this.#eventsKey,
      after,
    )) as StreamReply;
    return (reply?.[0]?.[1] ?? []).map(([id, fields]) => eventOf(id, fields));
  }

  /** The ids of the stream's first and newest entries. */
  async eventStreamEnds(): Promise<EventStreamEnds> {
    const [first, last, info] = await Promise.all([
      this.#connection.xrange(this.#eventsKey, '-', '+', 'COUNT', 1),
      this.#connection.xrevrange(this.#eventsKey, '+', '-', 'COUNT', 1),
      // No stream yet: nothing was ever removed from it.
      this.#connection.xinfo('STREAM', this.#eventsKey).catch(() => []),
    ]);
    const fields = info as unknown[];
    const field = (name: string): number => Number(fields[fields.indexOf(name) + 1] ?? 0);
    return {
      ...(first[0] !== undefined && { first: first[0][0] }),
      ...(last[0] !== undefined && { last: last[0][0] }),
      removed: fields.length === 0 ? 0 : Math.max(0, field('entries-added') - field('length')),
    };
  }

  /** Whether the entry `id` is still in the stream (BullMQ trims it to about 10,000 entries). */
  async hasEvent(id: string): Promise<boolean> {
    return (await this.#connection.xrange(this.#eventsKey, id, id)).length > 0;
  }

  /** Adds the job unless one with this id exists; true when this call added it. */
  async add(name: string, data: unknown, options: JobsOptions, jobId: string): Promise<boolean> {
    if ((await this.#queue.getJob(jobId)) !== undefined) return false;
    const job = await this.#queue.add(name, data, { ...options, jobId });
    return job.id === jobId;
  }

  /** The job's state now; a failure counts only once no attempt remains (BullMQ's `failed` state). */
  async state(jobId: string): Promise<ExistingJobState> {
    const job = await this.#queue.getJob(jobId);
    if (job === undefined) return { state: 'missing' };
    const state = await job.getState();
    if (state === 'completed' || state === 'failed') {
      // `job` was read before its state: a job that finished in between carries no outcome yet. A finished
      // job no longer changes, so read it again.
      const finished = await this.#queue.getJob(jobId);
      if (finished === undefined) return { state: 'missing' };
      const when = finished.finishedOn !== undefined && { finishedOn: finished.finishedOn };
      if (state === 'completed') return { state, returnvalue: finished.returnvalue, ...when };
      return { state, failedReason: finished.failedReason ?? 'the job failed', ...when };
    }
    if (state === 'unknown') return { state: 'missing' };
    const progress = job.progress;
    if (state === 'active' || state === 'delayed') return { state, progress };
    if (state === 'waiting' || state === 'prioritized' || state === 'waiting-children') {
      return { state: 'waiting', progress };
    }
    return { state: 'other', progress };
  }

  /**
   * Ids of jobs that have not started (waiting, also those of a paused queue; prioritized; delayed), `page` per
   * state from `start`.
   */
  async notStartedJobIds(start: number, page: number): Promise<string[]> {
    const states = ['waiting', 'prioritized', 'delayed'] as const;
    return await this.#queue.getRanges([...states], start, start + page - 1, true);
  }

  /** Removes the job if it is still waiting or delayed; true when removed. An active job is left alone. */
  async removeIfWaiting(jobId: string): Promise<boolean> {
    return await removeJobIfWaiting(this.#queue, jobId);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#queue.close()]);
    await Promise.all([closeRedis(this.#connection), closeRedis(this.#eventsConnection)]);
  }
}
