import { type JobsOptions, Queue, QueueEvents } from 'bullmq';
import type { Redis } from 'ioredis';
import { createRedisConnection } from './connection.js';
import { closeRedis } from './redis-close.js';
import { removeJobIfWaiting } from './tool-queues.js';

/** Where an existing BullMQ queue lives: its Redis, key prefix and name. */
export interface ExistingQueueAddress {
  readonly url: string;
  readonly prefix: string;
  readonly name: string;
}

/** What the bridge reads of a job of an existing queue. */
export type ExistingJobState =
  | { readonly state: 'missing' }
  | { readonly state: 'completed'; readonly returnvalue: unknown }
  | { readonly state: 'failed'; readonly failedReason: string }
  | { readonly state: 'active' | 'waiting' | 'delayed' | 'other'; readonly progress: unknown };

/** What happened to a followed job, as its queue's event stream tells it (`eventMs`: when the event was written). */
export type ExistingJobEvent =
  | { readonly kind: 'progress'; readonly data: unknown; readonly eventMs: number }
  | { readonly kind: 'active'; readonly eventMs: number }
  | { readonly kind: 'completed'; readonly returnvalue: unknown; readonly eventMs: number }
  | { readonly kind: 'failed'; readonly failedReason: string; readonly eventMs: number }
  | { readonly kind: 'removed'; readonly eventMs: number };

type Listener = (event: ExistingJobEvent) => void;

/** The time part of a Redis stream entry id (`<ms>-<n>`). */
function eventTime(id: string): number {
  const ms = Number.parseInt(id, 10);
  return Number.isFinite(ms) ? ms : Date.now();
}

/**
 * One existing BullMQ queue, as the bridge uses it: adds jobs (job id = the task id, so adding twice adds
 * nothing), reads a job's state, follows its queue's event stream (`QueueEvents`, one blocking connection
 * per queue, events dispatched by job id) and removes a job that has not started. The queue's own workers
 * are never touched.
 */
export class ExistingQueue {
  readonly address: ExistingQueueAddress;
  readonly #connection: Redis;
  /** QueueEvents blocks on XREAD: a connection of its own. */
  readonly #eventsConnection: Redis;
  readonly #events: QueueEvents;
  readonly #queue: Queue;
  readonly #listeners = new Map<string, Set<Listener>>();

  constructor(address: ExistingQueueAddress, onError: (error: Error) => void) {
    this.address = address;
    this.#connection = createRedisConnection(address.url, 'bullmq-worker', onError);
    this.#queue = new Queue(address.name, { connection: this.#connection, prefix: address.prefix });
    this.#queue.on('error', onError);
    this.#eventsConnection = createRedisConnection(address.url, 'bullmq-worker', onError);
    this.#events = new QueueEvents(address.name, { connection: this.#eventsConnection, prefix: address.prefix });
    this.#events.on('error', onError);
    const dispatch = (jobId: string, event: ExistingJobEvent): void => {
      for (const listener of this.#listeners.get(jobId) ?? []) listener(event);
    };
    this.#events.on('progress', ({ jobId, data }, id) =>
      dispatch(jobId, { kind: 'progress', data, eventMs: eventTime(id) }),
    );
    this.#events.on('active', ({ jobId }, id) => dispatch(jobId, { kind: 'active', eventMs: eventTime(id) }));
    this.#events.on('completed', ({ jobId, returnvalue }, id) =>
      dispatch(jobId, { kind: 'completed', returnvalue, eventMs: eventTime(id) }),
    );
    this.#events.on('failed', ({ jobId, failedReason }, id) =>
      dispatch(jobId, { kind: 'failed', failedReason, eventMs: eventTime(id) }),
    );
    this.#events.on('removed', ({ jobId }, id) => dispatch(jobId, { kind: 'removed', eventMs: eventTime(id) }));
  }

  /** Resolves once the queue and its event stream are connected. */
  async ready(): Promise<void> {
    await Promise.all([this.#queue.waitUntilReady(), this.#events.waitUntilReady()]);
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
      if (state === 'completed') return { state, returnvalue: finished.returnvalue };
      return { state, failedReason: finished.failedReason ?? 'the job failed' };
    }
    if (state === 'unknown') return { state: 'missing' };
    const progress = job.progress;
    if (state === 'active' || state === 'delayed') return { state, progress };
    if (state === 'waiting' || state === 'prioritized' || state === 'waiting-children') {
      return { state: 'waiting', progress };
    }
    return { state: 'other', progress };
  }

  /** Calls `listener` with every event of the job until the returned function is called. */
  follow(jobId: string, listener: Listener): () => void {
    let set = this.#listeners.get(jobId);
    if (set === undefined) {
      set = new Set();
      this.#listeners.set(jobId, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0) this.#listeners.delete(jobId);
    };
  }

  /** Removes the job if it is still waiting or delayed; true when removed. An active job is left alone. */
  async removeIfWaiting(jobId: string): Promise<boolean> {
    return await removeJobIfWaiting(this.#queue, jobId);
  }

  async close(): Promise<void> {
    await Promise.allSettled([this.#events.close(), this.#queue.close()]);
    await Promise.all([closeRedis(this.#connection), closeRedis(this.#eventsConnection)]);
  }
}
