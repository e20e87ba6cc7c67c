import { type Task, type TaskStatus, TaskStatusSchema } from '@taskgate/protocol';
import { TaskgateError } from './errors.js';

/** What a task is for: a `tools/call` with `params.task`, or a plain call run through the same pipeline. */
export type TaskKind = 'task' | 'direct';

/**
 * Which wire created a task: absent for the 2025-11-25 session wire, `2026-07-28` for a stateless request. The
 * record itself is the same for both; each wire projects it (`toTask`, or the 2026 projection in the gateway).
 */
export type TaskWire = '2026-07-28';

/** A task as Redis holds it, minus its outcome. Times are ms since the epoch (Redis server clock). */
export interface TaskRecord {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly createdAt: number;
  readonly lastUpdatedAt: number;
  /** Granted ttl in ms. */
  readonly ttl: number;
  readonly pollInterval?: number;
  /** Starts at 1 and grows by one with every change. */
  readonly version: number;
  readonly kind: TaskKind;
  /** Digest of the session that created the task (see `Keys.digest`). */
  readonly session?: string;
  readonly tool?: string;
}

/** A task record with the fields only the broker's own processes read (never a client). */
export interface StoredTask extends TaskRecord {
  /** Digest of the owner (see `Keys.ownerId`). */
  readonly ownerId: string;
  readonly progressToken?: string | number;
  readonly attempt?: number;
  /** When the current attempt started (ms since the epoch, Redis clock); absent until a worker starts it. */
  readonly startedAt?: number;
  readonly wire?: TaskWire;
}

/** The exact outcome `tasks/result` returns: the request's result, or its JSON-RPC error (RES-1, ERR-5). */
export type TaskOutcome =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

/** Builds a record from a hash or a published snapshot (both are string-valued field maps). */
export function recordFromFields(taskId: string, fields: Readonly<Record<string, string | undefined>>): StoredTask {
  const status = TaskStatusSchema.safeParse(fields.status);
  if (!status.success) {
    throw new TaskgateError('UNEXPECTED_SCRIPT_REPLY', `task ${taskId} has no valid status in Redis`);
  }
  const number = (value: string | undefined): number | undefined => (value === undefined ? undefined : Number(value));
  return {
    taskId,
    status: status.data,
    ...(fields.statusMessage !== undefined && { statusMessage: fields.statusMessage }),
    createdAt: number(fields.createdAt) ?? 0,
    lastUpdatedAt: number(fields.lastUpdatedAt) ?? 0,
    ttl: number(fields.ttl) ?? 0,
    ...(fields.pollInterval !== undefined && { pollInterval: Number(fields.pollInterval) }),
    version: number(fields.version) ?? 0,
    kind: fields.kind === 'direct' ? 'direct' : 'task',
    ...(fields.session !== undefined && { session: fields.session }),
    ...(fields.tool !== undefined && { tool: fields.tool }),
    ownerId: fields.owner ?? '',
    ...(fields.progressToken !== undefined && { progressToken: JSON.parse(fields.progressToken) as string | number }),
    ...(fields.attempt !== undefined && { attempt: Number(fields.attempt) }),
    ...(fields.startedAt !== undefined && { startedAt: Number(fields.startedAt) }),
    ...(fields.wire === '2026-07-28' && { wire: fields.wire }),
  };
}

/** The wire shape of a task (GET-1, GET-2): ISO 8601 times, granted ttl. */
export function toTask(record: TaskRecord): Task {
  return {
    taskId: record.taskId,
    status: record.status,
    ttl: record.ttl,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
    ...(record.pollInterval !== undefined && { pollInterval: record.pollInterval }),
    ...(record.statusMessage !== undefined && { statusMessage: record.statusMessage }),
  };
}
