import { hostname } from 'node:os';
import type { Redis } from 'ioredis';
import { Keys } from './keys.js';
import type { TaskRecord } from './task-record.js';
import type { TaskObserver } from './task-store.js';

/** One line of a task's trail: what happened, when (Redis clock) and on which pod. */
export interface TrailEntry {
  readonly at: number;
  readonly event: 'created' | 'started' | 'finished';
  readonly pod: string;
  readonly status?: string;
  readonly attempt?: number;
}

/** The name a process records on the trails it writes: the pod (HOSTNAME in Kubernetes), else the host name. */
export function podName(): string {
  return process.env.HOSTNAME ?? hostname();
}

/** Entries a trail keeps (older ones are trimmed): a task has a few, retried ones a few per attempt. */
const MAX_ENTRIES = 200;

/**
 * Each task's trail, a small Redis stream in the task's slot: which pod created, started and finished it.
 * Written after the transition it records, without waiting (it is for operators, never for the protocol), and
 * expiring with the task.
 */
export class TaskTrail {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(redis: Redis, keys: Keys = new Keys()) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /**
   * Appends an entry (one round trip: XADD and PEXPIREAT of one key, sent back to back); failures are dropped.
   * Not an ioredis pipeline: building one copies every script defined on the connection (BullMQ's and
   * taskgate's), which cost the worker more CPU than anything else it did per task.
   */
  record(task: Pick<TaskRecord, 'taskId' | 'createdAt' | 'ttl'>, fields: Record<string, string | number>): void {
    const key = this.#keys.taskTrail(task.taskId);
    this.#redis.xadd(key, 'MAXLEN', '~', MAX_ENTRIES, '*', ...Object.entries(fields).flat()).catch(() => {});
    this.#redis.pexpireat(key, task.createdAt + task.ttl).catch(() => {});
  }

  /** Every entry of a task's trail, oldest first. */
  async read(taskId: string): Promise<TrailEntry[]> {
    const entries = await this.#redis.xrange(this.#keys.taskTrail(taskId), '-', '+');
    return entries.map(([id, flat]) => {
      const fields: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
      return {
        at: Number(id.split('-')[0]),
        event: fields.e as TrailEntry['event'],
        pod: fields.pod ?? '',
        ...(fields.status !== undefined && { status: fields.status }),
        ...(fields.attempt !== undefined && { attempt: Number(fields.attempt) }),
      };
    });
  }
}

/**
 * A task observer that writes the trail of every creation, start and finish this process makes, for tool calls
 * (reads of resources and prompts, records without a tool, get none: they are many and short).
 */
export function trailObserver(trail: TaskTrail, pod: string = podName()): TaskObserver {
  return {
    created: (task) => {
      if (task.tool !== undefined) trail.record(task, { e: 'created', pod });
    },
    started: (task, attempt) => {
      if (task.tool !== undefined) trail.record(task, { e: 'started', pod, attempt });
    },
    finished: (task) => {
      if (task.tool !== undefined) trail.record(task, { e: 'finished', pod, status: task.status });
    },
  };
}

/** One observer that tells each of `observers` in turn. */
export function observeAll(...observers: readonly TaskObserver[]): TaskObserver {
  return {
    created: (task) => {
      for (const each of observers) each.created?.(task);
    },
    started: (task, attempt) => {
      for (const each of observers) each.started?.(task, attempt);
    },
    finished: (task) => {
      for (const each of observers) each.finished?.(task);
    },
  };
}
