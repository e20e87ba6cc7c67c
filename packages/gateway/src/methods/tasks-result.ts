import type { StoredTask } from '@taskgate/core';
import { type ClientRequestParams, isTerminalStatus } from '@taskgate/protocol';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import type { Reply, RpcContext } from './context.js';
import { ownedOutcome } from './tasks-methods.js';

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
