import { hostname } from 'node:os';
import { isTerminalStatus, type TaskStatus } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';
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

/** The task hash fields a trail is read from (written by the transition scripts, see includes/trail.lua). */
const FIELDS = ['createdAt', 'cpod', 'startedAt', 'attempt', 'spod', 'starts', 'lastUpdatedAt', 'status', 'fpod'];

/**
 * Each tool call's trail: which pod created, started and finished it. The scripts of those transitions write
 * it into the task's own hash (`TaskStoreOptions.pod`: a pod name per field, the times are the record's own),
 * so it costs no command and no key of its own and expires with the task. Tasks written by earlier versions
 * kept it in a stream of their own (`Keys.taskTrail`), which is read too until it expires.
 */
export class TaskTrail {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(redis: Redis, keys: Keys = new Keys()) {
    this.#redis = redis;
    this.#keys = keys;
  }

  /** Every entry of a task's trail, oldest first. */
  async read(taskId: string): Promise<TrailEntry[]> {
    const [values, streamed] = await Promise.all([
      this.#redis.hmget(this.#keys.task(taskId), ...FIELDS),
      this.#redis.xrange(this.#keys.taskTrail(taskId), '-', '+'),
    ]);
    const [createdAt, cpod, startedAt, attempt, spod, starts, lastUpdatedAt, status, fpod] = values;
    const entries: TrailEntry[] = streamed.map(([id, flat]) => {
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
    if (cpod != null) entries.push({ at: Number(createdAt), event: 'created', pod: cpod });
    for (const line of starts?.split('\n') ?? []) {
      const [n = '', at = '', ...pod] = line.split(' ');
      entries.push({ at: Number(at), event: 'started', pod: pod.join(' '), attempt: Number(n) });
    }
    if (spod != null) {
      entries.push({ at: Number(startedAt), event: 'started', pod: spod, attempt: Number(attempt ?? 1) });
    }
    // A terminal transition by the pod that started the attempt stores no `fpod`: that pod finished it.
    const finisher = fpod ?? (spod != null && isTerminalStatus(status as TaskStatus) ? spod : null);
    if (finisher != null) {
      entries.push({ at: Number(lastUpdatedAt), event: 'finished', pod: finisher, ...(status != null && { status }) });
    }
    // Created first and finished last whatever their clocks say: a late progress entry or a clock a
    // millisecond apart must not show a task acting after its end.
    const rank = (entry: TrailEntry): number => (entry.event === 'created' ? 0 : entry.event === 'finished' ? 2 : 1);
    return entries.sort((a, b) => rank(a) - rank(b) || a.at - b.at);
  }
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
