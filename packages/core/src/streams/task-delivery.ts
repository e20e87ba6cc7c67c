import type { Redis } from 'ioredis';
import { TaskgateError } from '../errors.js';
import { Keys } from '../redis/keys.js';
import { pipelineValues } from '../redis/pipeline-replies.js';
import { Scripts } from '../redis/script-replies.js';
import { TaskSessionKeys } from '../tasks/task-session-keys.js';
import type { OutboxEntry, OutboxMessage } from './outbox.js';

/** What claiming or refreshing a carrier lease found. */
export type CarrierResult = 'ok' | 'taken' | 'fenced';

/** A live task a session created, for its GET stream's sweep. */
export interface SessionTask {
  readonly taskId: string;
  /** Entries after the relay cursor exist. */
  readonly undelivered: boolean;
  /** Some stream carries the task's outbox. */
  readonly carried: boolean;
  /** The task waits for input (`input_required`): it has unanswered requests. */
  readonly waiting: boolean;
}

export interface TaskDeliveryOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
}

type Request = Extract<OutboxMessage, { type: 'request' }>;

/**
 * Who delivers a task's outbox. A tasks/result (or direct-call) stream that is open for a task holds the
 * task's carrier lease, refreshed with its heartbeats; while nobody holds it, the session's GET stream
 * delivers the task's messages (INP-5). The relay cursor records how far the outbox went out, so a message
 * goes out on one stream once, whichever pods the streams are on.
 */
export class TaskDelivery {
  readonly #redis: Redis;
  readonly #keys: Keys;
  readonly #scripts: Scripts;
  readonly #sessionKeys: TaskSessionKeys;

  constructor(options: TaskDeliveryOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.#scripts = new Scripts(options.redis);
    this.#sessionKeys = new TaskSessionKeys(options.redis, this.#keys);
  }

  /** Makes `streamId` the carrier of the task's outbox, unless another stream is. */
  claim(taskId: string, streamId: string, connectionId: string, leaseMs: number): Promise<CarrierResult> {
    return this.#lease('claim', taskId, streamId, connectionId, leaseMs);
  }

  /**
   * Extends the carrier lease `streamId` holds and, while `connectionId` holds the stream, the stream's
   * connection lease too ('taken' leaves the carrier lease alone but extends the connection lease).
   */
  refresh(taskId: string, streamId: string, connectionId: string, leaseMs: number): Promise<CarrierResult> {
    return this.#lease('refresh', taskId, streamId, connectionId, leaseMs);
  }

  /** Gives the carrier lease up; the session's GET stream then takes over what is left (a feed entry wakes it). */
  async release(taskId: string, streamId: string, connectionId: string): Promise<void> {
    await this.#lease('release', taskId, streamId, connectionId, 0);
  }

  /** The id of the last outbox entry some stream took ('0-0' when none). */
  async cursor(taskId: string): Promise<string> {
    return (await this.#redis.hget(this.#keys.taskRelay(taskId), 'cursor')) ?? '0-0';
  }

  /**
   * Input requests already relayed (up to the cursor) that are still unanswered and whose stream is gone:
   * no connection carries it and it is not `streamId` (which replays its own log). A new tasks/result stream
   * sends them again (INP-3), so a request whose stream the client dropped for good is not lost.
   */
  async orphanedRequests(taskId: string, streamId: string, outbox: readonly OutboxEntry[]): Promise<OutboxEntry[]> {
    const requests = outbox.filter((entry) => entry.message.type === 'request');
    if (requests.length === 0) return [];
    const ids = requests.map((entry) => (entry.message as Request).requestId);
    const streams = await this.#redis.hmget(this.#keys.taskRelay(taskId), ...ids);
    // One pipeline, all in the task's slot: its requests and the streams of its owner's sessions.
    const pipeline = this.#redis.pipeline();
    for (const id of ids) pipeline.hmget(this.#keys.inputRequest(id), 'taskId', 'answer');
    for (const stream of streams) if (stream !== null) pipeline.exists(this.#keys.sseConnection(stream));
    const replies = pipelineValues(await pipeline.exec(), pipeline.length);
    let next = ids.length;
    const liveness = streams.map((stream) => (stream === null ? false : replies[next++] === 1));
    return requests.filter((_entry, i) => {
      const [taskOf, answer] = replies[i] as (string | null)[];
      const live = liveness[i] === true;
      const stream = streams[i];
      return taskOf === taskId && answer === null && stream !== streamId && !(stream !== null && live);
    });
  }

  /** Records that `streamId` sent an input request again (while the task's relay state exists). */
  async recordSent(taskId: string, requestId: string, streamId: string): Promise<void> {
    const key = this.#keys.taskRelay(taskId);
    if ((await this.#redis.exists(key)) === 1) await this.#redis.hset(key, requestId, streamId);
  }

  /**
   * The owner's live tasks that `session` created, with whether they have undelivered messages, a carrier,
   * and pending input requests: what a GET stream sweeps when it opens and at every heartbeat (a carrier that
   * died leaves a lease that only expires; a stream that took a request may be gone for good).
   */
  async sessionTasks(ownerId: string, session: string): Promise<SessionTask[]> {
    const sessionDigest = Keys.digest(session);
    const ids = await this.#redis.zrange(this.#keys.ownerActive(ownerId), 0, -1);
    if (ids.length === 0) return [];
    const owners = this.#redis.pipeline();
    for (const id of ids) owners.hmget(this.#keys.task(id), 'session', 'kind', 'status');
    const found = pipelineValues(await owners.exec(), ids.length) as (string | null)[][];
    const mine = ids.flatMap((id, i) =>
      // A record without `kind` is a task's (the default is not stored).
      found[i]?.[0] === sessionDigest && found[i]?.[1] !== 'direct'
        ? [{ id, waiting: found[i]?.[2] === 'input_required' }]
        : [],
    );
    if (mine.length === 0) return [];
    const state = this.#redis.pipeline();
    for (const { id } of mine) {
      state.hget(this.#keys.taskRelay(id), 'cursor');
      state.xrevrange(this.#keys.taskOutbox(id), '+', '-', 'COUNT', 1);
      state.exists(this.#keys.taskCarrier(id));
    }
    const replies = pipelineValues(await state.exec(), 3 * mine.length);
    return mine.map(({ id: taskId, waiting }, i) => {
      const cursor = (replies[3 * i] as string | null) ?? '0-0';
      const last = (replies[3 * i + 1] as [string, string[]][])[0]?.[0];
      return {
        taskId,
        undelivered: last !== undefined && compareEntryIds(last, cursor) > 0,
        carried: replies[3 * i + 2] === 1,
        waiting,
      };
    });
  }

  async #lease(
    op: 'claim' | 'refresh' | 'release',
    taskId: string,
    streamId: string,
    connectionId: string,
    leaseMs: number,
  ): Promise<CarrierResult> {
    const run = ([feed, channel]: readonly [string, string]) =>
      this.#scripts.carrierLease(
        [this.#keys.taskCarrier(taskId), this.#keys.sseConnection(streamId), this.#keys.task(taskId), feed, channel],
        [op, streamId, connectionId, leaseMs, taskId],
      );
    // Only a release writes to the session's feed: a claim or a refresh (every carrying stream's heartbeat)
    // passes the task's own key in their place and reads nothing to find them.
    const taskKey = this.#keys.task(taskId);
    const reply = op === 'release' ? await this.#sessionKeys.run(taskId, run) : await run([taskKey, taskKey]);
    if (reply.kind === 'wrong_session_keys') {
      throw new TaskgateError(
        'UNEXPECTED_SCRIPT_REPLY',
        `carrierLease ${op} refused the task's own key as its session keys`,
      );
    }
    return reply.kind === 'not_held' ? 'taken' : reply.kind;
  }
}

/** Orders two stream entry ids (`<ms>-<seq>`, or `<ms>` alone for `<ms>-0`): negative, zero or positive. */
export function compareEntryIds(a: string, b: string): number {
  const aDash = a.indexOf('-');
  const bDash = b.indexOf('-');
  const aMs = Number(aDash < 0 ? a : a.slice(0, aDash));
  const bMs = Number(bDash < 0 ? b : b.slice(0, bDash));
  if (aMs !== bMs) return aMs - bMs;
  return (aDash < 0 ? 0 : Number(a.slice(aDash + 1))) - (bDash < 0 ? 0 : Number(b.slice(bDash + 1)));
}
