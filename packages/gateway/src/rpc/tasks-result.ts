import type { Logger, StoredTask, TaskOutcome } from '@taskgate/core';
import {
  type ClientRequestParams,
  ErrorCode,
  isTerminalStatus,
  ProtocolError,
  RELATED_TASK_META_KEY,
} from '@taskgate/protocol';
import type { Reply, RpcContext } from './context.js';
import { ownedOutcome } from './tasks-methods.js';

/**
 * What `tasks/result` answers for a terminal task (RES-1, ERR-5): the stored result with the related-task
 * `_meta` (RES-3), or the stored JSON-RPC error thrown as is. A cancelled task has no outcome (the request
 * never finished); like the reference SDK, that is a -32603 error saying so.
 */
export function terminalOutcome(task: StoredTask, outcome: TaskOutcome | undefined): Record<string, unknown> {
  if (outcome !== undefined && 'result' in outcome) {
    const meta = (outcome.result._meta ?? {}) as Record<string, unknown>;
    return { ...outcome.result, _meta: { ...meta, [RELATED_TASK_META_KEY]: { taskId: task.taskId } } };
  }
  if (outcome !== undefined) {
    throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
  }
  const why = task.statusMessage === undefined ? '' : `: ${task.statusMessage}`;
  throw new ProtocolError(
    ErrorCode.InternalError,
    task.status === 'cancelled' ? `Task was cancelled${why}` : `Task ${task.status} without a result${why}`,
    { taskId: task.taskId, status: task.status },
  );
}

/**
 * `tasks/result`: a terminal task answers at once as JSON. Otherwise the answer is a resumable SSE stream
 * (see `runTaskStream`) that carries the task's pending server-to-client requests with the related-task
 * `_meta` (INP-2, INP-3) and its progress and log messages, and blocks until the task is terminal (RES-2).
 * The client may drop the stream at any time and the task keeps running (RES-5).
 */
export async function tasksResult(ctx: RpcContext, params: ClientRequestParams<'tasks/result'>): Promise<Reply> {
  const { taskId } = params;
  const first = await ownedOutcome(ctx, taskId);
  if (isTerminalStatus(first.task.status)) {
    auditRetrieval(ctx.logger, first.task);
    return { kind: 'result', result: terminalOutcome(first.task, first.outcome) };
  }
  return streamReply('result', first.task);
}

/** A stream reply that carries the task its handler read, so the stream does not read it again. */
export function streamReply(role: 'result' | 'direct', task: StoredTask): Reply {
  return { kind: 'stream', role, taskId: task.taskId, task };
}

/** Audit log entry of a retrieved result (SEC-4). */
export function auditRetrieval(logger: Logger, task: StoredTask): void {
  logger.info(
    { audit: 'task.result_retrieved', taskId: task.taskId, status: task.status, owner: task.ownerId },
    'task result retrieved',
  );
}
