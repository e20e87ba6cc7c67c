import type { Redis } from 'ioredis';
import type { TaskLimits } from '../limits/task-limits.js';
import type { Keys } from '../redis/keys.js';
import type { StoredTask, TaskRecord } from './task-record.js';

export interface TaskStoreOptions {
  /** Connection for commands and scripts (never one in subscriber mode). */
  readonly redis: Redis;
  readonly keys?: Keys;
  /** Secret that signs `tasks/list` cursors; every gateway of a deployment needs the same one (≥ 16 bytes). */
  readonly cursorSecret: string | Uint8Array;
  readonly limits?: Partial<TaskLimits>;
  /** Told about every creation, first start and terminal transition this store makes (metrics). */
  readonly observer?: TaskObserver;
  /** Pod name the create, start, finish and cancel scripts write on a tool call's trail (TaskTrail); absent: none. */
  readonly pod?: string;
  /**
   * Where the times of a creation, a start and a finish come from. `followed` (the default): the Redis clock
   * as this process follows it (`RedisClock`: a `TIME` at most every 10 s), stamped when the write is sent.
   * `server`: a `TIME` inside each script, stamped when Redis runs it; one command more per write, and exact
   * for a burst of writes that waits in Redis's queue.
   */
  readonly clock?: 'followed' | 'server';
}

/**
 * Hooks for the transitions a task store performed. Each runs once per transition (the scripts refuse a
 * second terminal move), synchronously, and must not throw; errors are swallowed.
 */
export interface TaskObserver {
  created?(task: StoredTask): void;
  /** A worker started an attempt (1-based); `task.startedAt` says when. */
  started?(task: TaskRecord & Pick<StoredTask, 'startedAt'>, attempt: number): void;
  /** The task became completed, failed or cancelled. */
  finished?(task: TaskRecord): void;
}
