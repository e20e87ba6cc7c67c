import { isTerminalStatus } from '@taskgate/protocol';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import { callerTask, type TaskLookupServices } from './caller-task.js';
import type { Call, HandlerAnswer } from './context.js';

/**
 * `tasks/result`: a terminal task answers at once. Otherwise the request waits for the task (RES-2): the
 * revision carries its pending server-to-client requests with the related-task `_meta` (INP-2, INP-3) and
 * its progress and log messages meanwhile; the client may drop the wait and the task keeps running (RES-5).
 */
export async function tasksResult(
  ctx: Call<TaskLookupServices>,
  params: { readonly taskId: string },
): Promise<HandlerAnswer> {
  const first = await callerTask(ctx, params.taskId, true);
  if (!isTerminalStatus(first.task.status)) return { kind: 'pending', task: first.task };
  auditRetrieval(ctx.logger, first.task);
  return { kind: 'result', result: terminalOutcome(first.task, first.outcome) };
}
