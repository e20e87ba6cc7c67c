import { isTerminalStatus, type TaskStatus } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { ToolCatalog } from '../catalog/tool-catalog.js';
import { queuesOfTask } from '../queues/queue-shards.js';
import type { ToolQueues } from '../queues/tool-queues.js';
import { Keys } from '../redis/keys.js';
import type { TaskOutbox } from '../streams/outbox.js';
import { recordFromFields, type StoredResult, type StoredTask, type TaskKind } from '../tasks/task-record.js';
import type { TaskStore } from '../tasks/task-store.js';
import type { TaskTrail } from '../tasks/task-trail.js';
import { scanHashes } from './admin-scan.js';

/** A task as operators see it: every owner's, the owner as its digest, never arguments or results. */
export interface AdminTask {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly tool?: string;
  readonly kind: TaskKind;
  /** The owner's id: its slot tag and the SHA-256 digest of the principal (or session). */
  readonly owner: string;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  readonly expiresAt: number;
  readonly attempt?: number;
  readonly startedAt?: number;
}

export interface AdminTaskQuery {
  readonly status?: readonly TaskStatus[];
  readonly tool?: string;
  /** From a previous page's `nextCursor`. */
  readonly cursor?: string;
  /** Tasks per page (1-500). Default 50. */
  readonly limit?: number;
}

export interface AdminTaskPage {
  readonly tasks: AdminTask[];
  /** Present while the scan has keys left; a page may be short (or empty) and still have one. */
  readonly nextCursor?: string;
}

/** One line of a task's timeline. */
export interface TimelineEntry {
  readonly at: number;
  readonly event: 'created' | 'started' | 'progress' | 'input_request' | 'log' | 'finished';
  readonly pod?: string;
  readonly detail?: string;
}

export interface AdminTaskDetail {
  readonly task: AdminTask;
  /** How it ended: a result (with `isError`) or a JSON-RPC error; never the content. */
  readonly outcome?: { readonly isError: boolean } | { readonly error: { code: number; message: string } };
  readonly timeline: TimelineEntry[];
  /** The pods that created, started or finished it. */
  readonly pods: string[];
}

/** What an operator's cancel did. */
export type AdminCancelResult =
  | { readonly ok: true; readonly task: AdminTask }
  | { readonly ok: false; readonly reason: 'not_found' }
  | { readonly ok: false; readonly reason: 'terminal'; readonly status: TaskStatus };

export interface PurgeQuery {
  /** Terminal statuses to purge. Default: completed, failed, cancelled. */
  readonly status?: readonly TaskStatus[];
  /** Only tasks whose last change is at least this old (ms). Default 0. */
  readonly olderThanMs?: number;
  /** Keys examined per step. Default 500. */
  readonly batch?: number;
  /**
   * Told after every step: tasks examined and purged so far, of about `total` (counted by a first scan of key
   * names, done only when someone listens).
   */
  readonly onProgress?: (progress: PurgeProgress) => void;
}

export interface PurgeProgress {
  readonly scanned: number;
  readonly purged: number;
  readonly total: number;
}

export interface AdminTasksOptions {
  readonly redis: Redis;
  readonly keys: Keys;
  readonly tasks: TaskStore;
  readonly outbox: TaskOutbox;
  readonly trail: TaskTrail;
  readonly catalog: ToolCatalog;
  readonly queues: ToolQueues;
}

const FIELDS = [
  'status',
  'statusMessage',
  'createdAt',
  'lastUpdatedAt',
  'ttl',
  'kind',
  'tool',
  'owner',
  'attempt',
  'startedAt',
] as const;
const TERMINAL: readonly TaskStatus[] = ['completed', 'failed', 'cancelled'];

/** Where an entry goes among those of the same millisecond (a stable sort keeps the rest in trail order). */
function timelineRank(entry: TimelineEntry): number {
  return entry.event === 'created' ? 0 : entry.event === 'finished' ? 2 : 1;
}

function adminTask(record: StoredTask): AdminTask {
  return {
    taskId: record.taskId,
    status: record.status,
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
    ...(record.tool !== undefined && { tool: record.tool }),
    kind: record.kind,
    owner: record.ownerId,
    createdAt: record.createdAt,
    lastUpdatedAt: record.lastUpdatedAt,
    expiresAt: record.createdAt + record.ttl,
    ...(record.attempt !== undefined && { attempt: record.attempt }),
    ...(record.startedAt !== undefined && { startedAt: record.startedAt }),
  };
}

/**
 * The operator's view of tasks across every owner (the admin listener and `taskgate tasks --redis`): scans of
 * the task records, one task's timeline, cancelling with the semantics of `tasks/cancel`, purging finished ones.
 */
export class AdminTasks {
  readonly #o: AdminTasksOptions;

  constructor(options: AdminTasksOptions) {
    this.#o = options;
  }

  /** The task id in a task record's key, or undefined for other keys the pattern matched. */
  #taskIdOf(key: string): string | undefined {
    const id = key.slice(key.lastIndexOf(':') + 1);
    return this.#o.keys.task(id) === key ? id : undefined;
  }

  /** The records of `ids` (one HMGET each, sent at once: they live in many slots). */
  async #records(ids: readonly string[]): Promise<StoredTask[]> {
    const replies = await Promise.all(ids.map((id) => this.#o.redis.hmget(this.#o.keys.task(id), ...FIELDS)));
    const records: StoredTask[] = [];
    replies.forEach((values, i) => {
      if (values[0] == null) return;
      const fields: Record<string, string> = {};
      FIELDS.forEach((name, j) => {
        const value = values[j];
        if (value != null) fields[name] = value;
      });
      records.push(recordFromFields(ids[i] as string, fields));
    });
    return records;
  }

  /** One page of every owner's tasks, filtered by status and tool, in scan order. */
  async list(query: AdminTaskQuery = {}): Promise<AdminTaskPage> {
    const limit = Math.min(500, Math.max(1, query.limit ?? 50));
    const statuses = query.status === undefined || query.status.length === 0 ? undefined : new Set(query.status);
    const tasks: AdminTask[] = [];
    let cursor = query.cursor ?? '';
    // A bounded number of steps per page: a sparse filter answers a short page with a cursor, not a long wait.
    for (let step = 0; step < 20 && tasks.length < limit; step++) {
      const found = await scanHashes(this.#o.redis, this.#o.keys.taskPattern(), cursor, Math.max(100, limit * 2));
      cursor = found.cursor;
      const ids = found.keys.map((key) => this.#taskIdOf(key)).filter((id): id is string => id !== undefined);
      for (const record of await this.#records(ids)) {
        if (statuses !== undefined && !statuses.has(record.status)) continue;
        if (query.tool !== undefined && record.tool !== query.tool) continue;
        tasks.push(adminTask(record));
      }
      if (cursor === '') break;
    }
    return cursor === '' ? { tasks } : { tasks, nextCursor: cursor };
  }

  /** One task with its timeline (creation, attempts, progress, input requests, outcome, pods), or undefined. */
  async detail(taskId: string): Promise<AdminTaskDetail | undefined> {
    const [record] = await this.#records([taskId]);
    if (record === undefined) return undefined;
    const [rawOutcome, trail, entries] = await Promise.all([
      this.#o.redis.hget(this.#o.keys.task(taskId), 'outcome'),
      this.#o.trail.read(taskId),
      this.#o.outbox.read(taskId, '0', 1000),
    ]);
    const timeline: TimelineEntry[] = trail.map((entry) => ({
      at: entry.at,
      event: entry.event,
      pod: entry.pod,
      ...(entry.event === 'started' && { detail: `attempt ${entry.attempt ?? 1}` }),
      ...(entry.event === 'finished' && entry.status !== undefined && { detail: entry.status }),
    }));
    if (!trail.some((entry) => entry.event === 'created')) timeline.push({ at: record.createdAt, event: 'created' });
    for (const { id, message } of entries) {
      const at = Number(id.split('-')[0]);
      if (message.type === 'progress') {
        const total = message.total === undefined ? '' : `/${message.total}`;
        timeline.push({ at, event: 'progress', detail: `${message.progress}${total}` });
      } else if (message.type === 'request') timeline.push({ at, event: 'input_request', detail: message.method });
      else timeline.push({ at, event: 'log', detail: message.level });
    }
    // Same millisecond: the creation first and the end last (a tool's last progress often shares its end's ms).
    timeline.sort((a, b) => a.at - b.at || timelineRank(a) - timelineRank(b));
    const outcome = rawOutcome === null ? undefined : (JSON.parse(rawOutcome) as StoredResult);
    return {
      task: adminTask(record),
      ...(outcome !== undefined && {
        outcome:
          'error' in outcome
            ? { error: { code: outcome.error.code, message: outcome.error.message } }
            : { isError: outcome.result.isError === true },
      }),
      timeline,
      pods: [...new Set(trail.map((entry) => entry.pod))],
    };
  }

  /** Cancels any owner's task like `tasks/cancel`: `cancelled` at once, a job not started yet removed. */
  async cancel(taskId: string, statusMessage: string): Promise<AdminCancelResult> {
    const record = await this.#o.tasks.read(taskId);
    if (record === undefined) return { ok: false, reason: 'not_found' };
    if (isTerminalStatus(record.status)) return { ok: false, reason: 'terminal', status: record.status };
    const result = await this.#o.tasks.cancelAsBroker({ taskId, ownerId: record.ownerId }, statusMessage);
    if (!result.ok)
      return result.reason === 'not_found' ? result : { ok: false, reason: 'terminal', status: result.status };
    if (record.tool !== undefined) {
      const entry = await this.#o.catalog.get(record.tool);
      const queue = entry?.queue ?? Keys.toolQueueName(record.tool);
      // On the task's shard under the current count, or under an older one if it was enqueued before a change.
      const counts = [entry?.queueShards ?? 1, ...(await this.#o.catalog.shardCounts(queue)).map((c) => c.shards)];
      await this.#o.queues.removeWaitingFromAny(queuesOfTask(queue, counts, taskId), taskId).catch(() => false);
    }
    return { ok: true, task: adminTask({ ...record, ...result.task, ownerId: record.ownerId }) };
  }

  /** Deletes finished tasks (record, outbox, trail, relay state, index entry), a batch per step. */
  async purge(query: PurgeQuery = {}): Promise<{ scanned: number; purged: number }> {
    const statuses = new Set<TaskStatus>((query.status ?? TERMINAL).filter((status) => isTerminalStatus(status)));
    const before = Date.now() - (query.olderThanMs ?? 0);
    const { redis, keys } = this.#o;
    const batch = query.batch ?? 500;
    let total = 0;
    if (query.onProgress !== undefined) {
      let counting = '';
      do {
        const found = await scanHashes(redis, keys.taskPattern(), counting, batch);
        counting = found.cursor;
        total += found.keys.filter((key) => this.#taskIdOf(key) !== undefined).length;
      } while (counting !== '');
    }
    let cursor = '';
    let scanned = 0;
    let purged = 0;
    do {
      const found = await scanHashes(redis, keys.taskPattern(), cursor, batch);
      cursor = found.cursor;
      const ids = found.keys.map((key) => this.#taskIdOf(key)).filter((id): id is string => id !== undefined);
      scanned += ids.length;
      const doomed = (await this.#records(ids)).filter(
        (record) => statuses.has(record.status) && record.lastUpdatedAt <= before,
      );
      // One MULTI per task: its keys and its owner's index share the owner's slot.
      await Promise.all(
        doomed.map((record) => {
          const id = record.taskId;
          const multi = redis.multi();
          multi.del(keys.task(id), keys.taskOutbox(id), keys.taskTrail(id), keys.taskRelay(id), keys.taskCarrier(id));
          multi.zrem(keys.ownerTasks(record.ownerId), id);
          return multi.exec();
        }),
      );
      purged += doomed.length;
      query.onProgress?.({ scanned, purged, total: Math.max(total, scanned) });
    } while (cursor !== '');
    return { scanned, purged };
  }
}
