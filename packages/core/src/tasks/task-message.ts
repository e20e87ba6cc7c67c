import { isTaskStatus, isTerminalStatus } from '@taskgate/protocol';
import { recordFromFields, type StoredResult, type StoredTask } from './task-record.js';

/**
 * One message of a task's channel, decoded: the task's snapshot after a change a client can see (its status
 * or status message), and, for a finish whose outcome is small (`finishTask-5.lua`), that outcome.
 */
export interface TaskChange {
  /**
   * The task as the snapshot shows it. A snapshot does not name the owner: `ownerId` is empty, and a caller
   * that checked the owner on an earlier read carries that one over.
   */
  readonly task: StoredTask;
  /** Whether the status is terminal (completed, failed, cancelled). */
  readonly terminal: boolean;
  /** The stored outcome the finish carried (`{ result }` or `{ error }`), as a read would give it. */
  readonly outcome?: StoredResult;
}

/**
 * The entry id a task channel's message announces when it is an arrival in the task's outbox (`<ms>-<n>`, see
 * appendOutbox-6.lua), else undefined (a snapshot: see `decodeTaskMessage`).
 */
export function outboxArrivalOf(message: string): string | undefined {
  return OUTBOX_ENTRY.test(message) ? message : undefined;
}

const OUTBOX_ENTRY = /^\d{1,20}-\d{1,20}$/;

/**
 * Decodes a task channel's message (see `includes/changeTask.lua`: a JSON object of string fields, plus a
 * finish's `outcome`). Undefined when it is not one (not JSON, no valid status): the reader then re-reads the
 * task instead of trusting it. The one place the channel's payload is parsed.
 */
export function decodeTaskMessage(taskId: string, message: string): TaskChange | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  const parsed = value as Record<string, unknown>;
  // String fields as a hash holds them; the snapshot never carries the owner (a client's digest), so whatever
  // a message says of it is dropped, and a finish's `outcome` is not a field.
  const fields: Record<string, string> = {};
  for (const name in parsed) {
    if (name === 'outcome' || name === 'owner') continue;
    const field = parsed[name];
    if (typeof field === 'string') fields[name] = field;
    else if (typeof field === 'number') fields[name] = String(field);
  }
  const status = fields.status;
  if (!isTaskStatus(status)) return undefined;
  const task = recordFromFields(taskId, fields);
  const outcome = carriedOutcome(parsed.outcome);
  return outcome === undefined
    ? { task, terminal: isTerminalStatus(status) }
    : { task, terminal: isTerminalStatus(status), outcome };
}

/** The outcome a finish's message carried: `{ result }` or `{ error }` objects, else undefined. */
function carriedOutcome(value: unknown): StoredResult | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const outcome = value as Record<string, unknown>;
  const part = outcome.result ?? outcome.error;
  return typeof part === 'object' && part !== null ? (value as StoredResult) : undefined;
}
