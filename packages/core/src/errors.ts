import { ErrorCode, ProtocolError, type TaskStatus } from '@taskgate/protocol';

/** String codes of internal errors; these never go on the wire as such. */
export type InternalErrorCode =
  | 'TASK_ID_COLLISION'
  | 'UNEXPECTED_SCRIPT_REPLY'
  | 'INVALID_CONFIG'
  | 'REPLICATION_TIMEOUT';

/** An internal failure: carries a string code for logs and tests; clients only ever see -32603. */
export class TaskgateError extends Error {
  override readonly name = 'TaskgateError';

  constructor(
    readonly code: InternalErrorCode,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Stable string codes of the refusals below, for logs and tests; the wire carries the JSON-RPC code only. */
export type RefusalReason =
  | 'TASK_NOT_FOUND'
  | 'TASK_EXPIRED'
  | 'TASK_TERMINAL'
  | 'INVALID_CURSOR'
  | 'TASK_LIMIT_EXCEEDED'
  | 'SESSION_LIMIT_EXCEEDED';

/** A ProtocolError that core answers with, tagged with a stable string code. */
export class TaskRefusal extends ProtocolError {
  constructor(
    readonly reason: RefusalReason,
    code: number,
    message: string,
    data?: unknown,
  ) {
    super(code, message, data);
  }
}

/** -32602 for an unknown task, or another owner's task: the two must be indistinguishable (SEC-1). */
export function taskNotFound(): ProtocolError {
  return new TaskRefusal('TASK_NOT_FOUND', ErrorCode.InvalidParams, 'Failed to retrieve task: Task not found');
}

/** -32602 for a task whose ttl has run out (TTL-2). */
export function taskExpired(): ProtocolError {
  return new TaskRefusal('TASK_EXPIRED', ErrorCode.InvalidParams, 'Failed to retrieve task: Task has expired');
}

/** -32602 for cancelling a task that is already terminal (CNL-1). */
export function cannotCancelTerminal(status: TaskStatus): ProtocolError {
  return new TaskRefusal(
    'TASK_TERMINAL',
    ErrorCode.InvalidParams,
    `Cannot cancel task: already in terminal status '${status}'`,
  );
}

/** -32602 for a cursor that is not one we issued to this owner, or is too old. */
export function invalidCursor(reason: string): ProtocolError {
  return new TaskRefusal(
    'INVALID_CURSOR',
    ErrorCode.InvalidParams,
    `Invalid cursor: ${reason}. Call tasks/list without a cursor to start over.`,
  );
}

/** The owner is at its concurrency limit (TTL-3). */
export function taskLimitExceeded(limit: number): ProtocolError {
  return new TaskRefusal(
    'TASK_LIMIT_EXCEEDED',
    ErrorCode.TaskLimitExceeded,
    `Too many active tasks: at most ${limit} tasks may be working or waiting for input at once. ` +
      'Wait for a task to finish, or cancel one, then try again.',
    { limit },
  );
}

/** The principal has the most sessions it may have (`initialize` refused). */
export function sessionLimitExceeded(limit: number): ProtocolError {
  return new TaskRefusal(
    'SESSION_LIMIT_EXCEEDED',
    ErrorCode.SessionLimitExceeded,
    `Too many sessions: at most ${limit} sessions of one principal may be open at once. ` +
      'End one (DELETE with its Mcp-Session-Id) or wait for an idle one to expire, then try again.',
    { limit },
  );
}
