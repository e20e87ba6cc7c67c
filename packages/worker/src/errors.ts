/**
 * Why a running handler's `ctx.signal` was aborted:
 * - `cancelled`: the task was cancelled (by its requestor, or by the broker);
 * - `gone`: the task expired or was deleted;
 * - `finished`: the task ended elsewhere (e.g. failed by crash recovery while this attempt still ran);
 * - `timeout`: the tool's `timeoutMs` elapsed;
 * - `shutdown`: the worker is shutting down and its drain deadline passed (the job goes back to the queue);
 * - `lock-lost`: BullMQ could not renew this job's lock, so another worker may run it.
 */
export type AbortKind = 'cancelled' | 'gone' | 'finished' | 'timeout' | 'shutdown' | 'lock-lost';

const ABORT_MESSAGES: Record<AbortKind, string> = {
  cancelled: 'The task was cancelled',
  gone: 'The task expired or was deleted',
  finished: 'The task was finished by another worker',
  timeout: 'The tool ran longer than its timeout',
  shutdown: 'The worker is shutting down',
  'lock-lost': 'The worker lost its lock on the job',
};

/** The `reason` of an aborted `ctx.signal`. Named `AbortError` so the usual `error.name` checks work. */
export class TaskAbortedError extends Error {
  override readonly name = 'AbortError';
  /** Stable string code, for logs and tests (`kind` says why). */
  readonly code = 'TASK_ABORTED';

  constructor(readonly kind: AbortKind) {
    super(ABORT_MESSAGES[kind]);
  }
}

/** A tool asked the client for something (elicitation, sampling) that the client did not declare support for. */
export class ClientCapabilityError extends Error {
  override readonly name = 'ClientCapabilityError';
  /** Stable string code, for logs and tests. */
  readonly code = 'CLIENT_CAPABILITY_MISSING';
}

/** A handler's return value does not fit the tool's `outputSchema`, or is not a valid CallToolResult. */
export class ToolOutputError extends Error {
  override readonly name = 'ToolOutputError';
  /** Stable string code, for logs and tests. */
  readonly code = 'INVALID_TOOL_OUTPUT';
}

/**
 * The task a client made of an elicitation or sampling request (CLT-1) ended `failed` or `cancelled`: what
 * `ctx.elicit` / `ctx.sample` reject with, carrying the client's own message.
 */
export class ClientTaskError extends Error {
  override readonly name = 'ClientTaskError';
  /** Stable string code, for logs and tests. */
  readonly code = 'CLIENT_TASK_ENDED';

  constructor(
    readonly status: 'failed' | 'cancelled',
    readonly clientMessage: string | undefined,
  ) {
    super(`The client's task ${status}${clientMessage === undefined ? '' : `: ${clientMessage}`}`);
  }
}
