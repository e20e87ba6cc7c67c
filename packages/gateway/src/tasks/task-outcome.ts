import type { Logger, StoredResult, StoredTask, TaskRecord, TaskStore } from '@taskgate/core';
import { ErrorCode, ProtocolError, RELATED_TASK_META_KEY, type RequestId, toJsonRpcError } from '@taskgate/protocol';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';

/**
 * What `tasks/result` answers for a terminal task (RES-1, ERR-5): the stored result with the related-task
 * `_meta` (RES-3), or the stored JSON-RPC error thrown as is. A cancelled task has no outcome (the request
 * never finished); like the reference SDK, that is a -32603 error saying so.
 */
export function terminalOutcome(task: StoredTask, outcome: StoredResult | undefined): Record<string, unknown> {
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

/** Audit log entry of a retrieved result (SEC-4). */
export function auditRetrieval(logger: Logger, task: StoredTask): void {
  logger.info(
    { audit: 'task.result_retrieved', taskId: task.taskId, status: task.status, owner: task.ownerId },
    'task result retrieved',
  );
}

/**
 * The response of a finished direct call: its result, its JSON-RPC error, or why it has neither. `known`: the
 * outcome as the finish's message carried it (not read again).
 */
export async function directCallOutcome(
  caller: { readonly tasks: TaskStore; readonly owner: string },
  id: RequestId,
  taskId: string,
  task: TaskRecord | undefined,
  known?: Promise<{ readonly outcome?: StoredResult }>,
): Promise<Record<string, unknown>> {
  try {
    if (task === undefined) throw ProtocolError.internal('The call expired before it finished');
    const { outcome } = await (known ?? caller.tasks.outcome(caller.owner, taskId));
    if (outcome !== undefined && 'result' in outcome) return resultMessage(id, outcome.result);
    if (outcome !== undefined) return errorResponse(id, outcome.error);
    const why = task.statusMessage === undefined ? '' : `: ${task.statusMessage}`;
    throw ProtocolError.internal(
      task.status === 'cancelled' ? `The call was cancelled${why}` : `The call ended without a result${why}`,
    );
  } catch (error) {
    return errorResponse(id, toJsonRpcError(error));
  }
}
