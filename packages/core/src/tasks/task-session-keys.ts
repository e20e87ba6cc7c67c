import type { Redis } from 'ioredis';
import { TaskgateError } from '../errors.js';
import { Keys } from '../redis/keys.js';
import type { WrongSessionKeys } from '../redis/script-replies.js';

/** The feed and channel of the session that created a task: what its scripts take in KEYS besides the task. */
export type SessionKeys = readonly [feed: string, channel: string];

const MAX_REMEMBERED = 10_000;
/** Task key → its session keys. A task's session never changes, so what was read once stays true. */
const remembered = new Map<string, SessionKeys>();

/**
 * Finds the session keys of tasks, so that every key a script touches is passed in KEYS (the scripting
 * contract a Redis Cluster enforces): from the task's record (`session`, the digest of its session id) the
 * first time, from memory after that. A task without a session passes its own key in their place. The
 * scripts check what they are given against the record and refuse a mismatch, so a wrong guess costs one
 * more read, never a write to the wrong key.
 */
export class TaskSessionKeys {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(redis: Redis, keys: Keys) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** Records a task's session (the digest of its id, as the record holds it; undefined: none). */
  remember(taskId: string, sessionDigest: string | undefined): SessionKeys {
    const taskKey = this.#keys.task(taskId);
    const tag = Keys.tagOf(taskId);
    const keys: SessionKeys =
      sessionDigest === undefined
        ? [taskKey, taskKey]
        : [this.#keys.sessionFeedOf(tag, sessionDigest), this.#keys.sessionChannelOf(tag, sessionDigest)];
    if (remembered.size >= MAX_REMEMBERED) remembered.clear();
    remembered.set(taskKey, keys);
    return keys;
  }

  /** A finished task's keys are not needed any more. */
  forget(taskId: string): void {
    remembered.delete(this.#keys.task(taskId));
  }

  /** The task's session keys: remembered, or read from its record. */
  async of(taskId: string): Promise<SessionKeys> {
    return remembered.get(this.#keys.task(taskId)) ?? (await this.#read(taskId));
  }

  /**
   * Runs a script with the task's session keys; when the script says they are not the task's, reads them
   * from the record and runs it once more.
   */
  async run<R extends { readonly kind: string }>(
    taskId: string,
    script: (keys: SessionKeys) => Promise<R | WrongSessionKeys>,
  ): Promise<Exclude<R, WrongSessionKeys>> {
    const first = await script(await this.of(taskId));
    if (first.kind !== 'wrong_session_keys') return first as Exclude<R, WrongSessionKeys>;
    const second = await script(await this.#read(taskId));
    if (second.kind !== 'wrong_session_keys') return second as Exclude<R, WrongSessionKeys>;
    throw new TaskgateError('UNEXPECTED_SCRIPT_REPLY', `the session keys of task ${taskId} do not match its record`);
  }

  async #read(taskId: string): Promise<SessionKeys> {
    const session = await this.#redis.hget(this.#keys.task(taskId), 'session');
    return this.remember(taskId, session ?? undefined);
  }
}
