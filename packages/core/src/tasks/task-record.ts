import { isTaskStatus, type Task, type TaskStatus } from '@taskgate/protocol';
import { TaskgateError } from '../errors.js';

/** What a task is for: a `tools/call` with `params.task`, or a plain call run through the same pipeline. */
export type TaskKind = 'task' | 'direct';

/**
 * Which wire created a task: absent for the 2025-11-25 session wire, `2026-07-28` for a request of that revision. The
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
  /** The current attempt's number (the executions begun; a first attempt's is not stored, only its start). */
  readonly attempt?: number;
  /** When the current attempt started (ms since the epoch, Redis clock); absent until a worker starts it. */
  readonly startedAt?: number;
  readonly wire?: TaskWire;
}

/**
 * A task's stored result, exactly what `tasks/result` returns: the request's result, or its JSON-RPC error
 * (RES-1, ERR-5). Stored in the record's `outcome` field once the task is terminal.
 */
export type StoredResult =
  | { readonly result: Record<string, unknown> }
  | { readonly error: { readonly code: number; readonly message: string; readonly data?: unknown } };

/** Builds a record from a hash or a published snapshot (both are string-valued field maps). */
export function recordFromFields(taskId: string, fields: Readonly<Record<string, string | undefined>>): StoredTask {
  const status = fields.status;
  if (!isTaskStatus(status)) {
    throw new TaskgateError('UNEXPECTED_SCRIPT_REPLY', `task ${taskId} has no valid status in Redis`);
  }
  // Built field by field, in the order of the type (no spread per optional field: each made an object).
  const record: Building = { taskId, status };
  if (fields.statusMessage !== undefined) record.statusMessage = fields.statusMessage;
  record.createdAt = numberOr0(fields.createdAt);
  record.lastUpdatedAt = numberOr0(fields.lastUpdatedAt);
  record.ttl = numberOr0(fields.ttl);
  if (fields.pollInterval !== undefined) record.pollInterval = Number(fields.pollInterval);
  record.version = numberOr0(fields.version);
  record.kind = fields.kind === 'direct' ? 'direct' : 'task';
  if (fields.session !== undefined) record.session = fields.session;
  if (fields.tool !== undefined) record.tool = fields.tool;
  record.ownerId = fields.owner ?? '';
  if (fields.progressToken !== undefined) record.progressToken = JSON.parse(fields.progressToken) as string | number;
  if (fields.attempt !== undefined) record.attempt = Number(fields.attempt);
  if (fields.startedAt !== undefined) record.startedAt = Number(fields.startedAt);
  if (fields.wire === '2026-07-28') record.wire = fields.wire;
  return record as StoredTask;
}

/** A numeric field of a task's hash; 0 when absent. */
function numberOr0(value: string | undefined): number {
  return value === undefined ? 0 : Number(value);
}

/** A record while it is built: every field writable, and optional until set. */
type Building = { -readonly [K in keyof StoredTask]?: StoredTask[K] };

/** The wire shape of a task (GET-1, GET-2): ISO 8601 times, granted ttl. */
export function toTask(record: TaskRecord): Task {
  const task: { -readonly [K in keyof Task]: Task[K] } = {
    taskId: record.taskId,
    status: record.status,
    ttl: record.ttl,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUpdatedAt: new Date(record.lastUpdatedAt).toISOString(),
  };
  if (record.pollInterval !== undefined) task.pollInterval = record.pollInterval;
  if (record.statusMessage !== undefined) task.statusMessage = record.statusMessage;
  return task;
}

/** Addresses a task from a worker or the broker itself: the id and the owner digest (both from job data). */
export interface TaskRef {
  readonly taskId: string;
  readonly ownerId: string;
  /**
   * Digest of the session that created the task (`null`: it has none), when the caller knows it (job data
   * carry it): its transitions then need not read it from the record to find the session's feed and channel.
   */
  readonly session?: string | null;
}

/** The task a job runs, from its job data. */
export function taskRefOf(data: {
  readonly taskId: string;
  readonly ownerId: string;
  readonly session?: string | null;
}): TaskRef {
  return { taskId: data.taskId, ownerId: data.ownerId, ...(data.session !== undefined && { session: data.session }) };
}

export const RECORD_FIELDS = [
  'status',
  'statusMessage',
  'createdAt',
  'lastUpdatedAt',
  'ttl',
  'pollInterval',
  'version',
  'kind',
  'session',
  'tool',
  'owner',
  'progressToken',
  'attempt',
  'startedAt',
  'wire',
] as const;

/** The caller's task as tasks/result reads it (see `TaskStore.outcome`). */
export interface OwnedTaskRead {
  readonly task: StoredTask;
  readonly outcome?: StoredResult;
  /** The task's outbox has had an entry: a message for the client. */
  readonly outbox?: true;
}

/**
 * RECORD_FIELDS, the stored outcome and `outboxLast` (set once the task's outbox has had an entry), read
 * together by tasks/result.
 */
export const RECORD_AND_OUTCOME: readonly string[] = [...RECORD_FIELDS, 'outcome', 'outboxLast'];

/** A record from an HMGET of RECORD_FIELDS, or undefined when the hash does not exist. */
export function recordFromValues(
  taskId: string,
  values: readonly (string | null)[] | undefined,
): StoredTask | undefined {
  if (values?.[0] == null) return undefined;
  const fields: Record<string, string> = {};
  RECORD_FIELDS.forEach((name, i) => {
    const value = values[i];
    if (value != null) fields[name] = value;
  });
  // A first attempt's start is stored without its number (startTask): nothing derivable is stored.
  if (fields.startedAt !== undefined) fields.attempt ??= '1';
  return recordFromFields(taskId, fields);
}

/** A short diagnostic for a failed task (ERR-4): the error's message, or the first text of an error result. */
export function diagnosticMessage(outcome: StoredResult): string {
  if ('error' in outcome) return outcome.error.message;
  const content = outcome.result.content;
  const first = Array.isArray(content) ? (content[0] as { type?: unknown; text?: unknown } | undefined) : undefined;
  const text = first?.type === 'text' && typeof first.text === 'string' ? first.text : 'The tool reported an error';
  return text.length > 500 ? `${text.slice(0, 497)}...` : text;
}
