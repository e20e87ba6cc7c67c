import { type StoredTask, type TaskOutcome, taskExpired } from '@taskgate/core';
import {
  type ClientRequestParams,
  ErrorCode,
  isTerminalStatus,
  ProtocolError,
  RELATED_TASK_META_KEY,
  toJsonRpcError,
} from '@taskgate/protocol';
import { errorMessage, type Reply, type RpcContext, resultMessage } from './context.js';
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
 * `tasks/result`: a terminal task answers at once as JSON. Otherwise the answer is an SSE stream that blocks
 * until the task is terminal (RES-2): the watcher subscribes to the task's channel before re-reading it, so no
 * change is lost; the client may drop the stream at any time and the task keeps running (RES-5).
 */
export async function tasksResult(ctx: RpcContext, params: ClientRequestParams<'tasks/result'>): Promise<Reply> {
  const { taskId } = params;
  const first = await ownedOutcome(ctx, taskId);
  if (isTerminalStatus(first.task.status)) {
    audit(ctx, first.task);
    return { kind: 'result', result: terminalOutcome(first.task, first.outcome) };
  }
  const { id } = ctx.request;
  return {
    kind: 'stream',
    role: 'result',
    run: async (stream) => {
      const waited = await ctx.services.watcher.untilTerminal(taskId, {
        signal: stream.signal,
        pollMs: ctx.services.pollMs,
      });
      if (waited.kind === 'aborted') return;
      try {
        if (waited.kind === 'gone') throw taskExpired();
        const { task, outcome } = await ownedOutcome(ctx, taskId);
        audit(ctx, task);
        stream.send(resultMessage(id, terminalOutcome(task, outcome)));
      } catch (error) {
        stream.send(errorMessage(id, toJsonRpcError(error)));
      }
    },
  };
}

function audit(ctx: RpcContext, task: StoredTask): void {
  ctx.logger.info(
    { audit: 'task.result_retrieved', taskId: task.taskId, status: task.status, owner: task.ownerId },
    'task result retrieved',
  );
}
