import { createHash } from 'node:crypto';

/**
 * Builds every Redis key and channel name taskgate uses. Nothing else in the code base concatenates key
 * strings, so the layout (and later Redis Cluster hash tags) lives here alone.
 *
 * Owners (principals, or session ids when auth is off) never appear in keys verbatim: a session id is a
 * bearer secret, so owner-scoped keys use a digest of the owner.
 */
export class Keys {
  constructor(readonly prefix = 'tg') {
    if (!/^[A-Za-z0-9_.-]{1,64}$/.test(prefix)) {
      throw new Error(`Invalid key prefix '${prefix}': use 1-64 characters of A-Z a-z 0-9 _ . -`);
    }
  }

  /** A stable, non-reversible id for an owner, safe to put in keys, logs and job data. */
  static ownerId(owner: string): string {
    return createHash('sha256').update(owner).digest('base64url').slice(0, 32);
  }

  /** Hash holding one task's record. */
  task(taskId: string): string {
    return `${this.prefix}:task:${taskId}`;
  }

  /** Stream of server-to-client messages of one task, waiting for a stream to carry them. */
  taskOutbox(taskId: string): string {
    return `${this.prefix}:task:${taskId}:outbox`;
  }

  /** Sorted set of an owner's tasks, score = expiry (ms). */
  ownerTasks(ownerId: string): string {
    return `${this.prefix}:owner:${ownerId}:tasks`;
  }

  /** Sorted set of an owner's non-terminal tasks, score = expiry (ms); its size is the concurrency in use. */
  ownerActive(ownerId: string): string {
    return `${this.prefix}:owner:${ownerId}:active`;
  }

  /** Pub/sub channel that carries every change of one task. */
  taskChannel(taskId: string): string {
    return `${this.prefix}:ch:task:${taskId}`;
  }

  /** The key prefix of task channels, for scripts that build the channel name themselves. */
  taskChannelPrefix(): string {
    return `${this.prefix}:ch:task:`;
  }
}
