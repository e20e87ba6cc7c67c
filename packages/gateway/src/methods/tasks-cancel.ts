import { isTerminalStatus } from '@taskgate/protocol';
import { type CancelServices, removeWaitingJob } from '../tasks/cancel-call.js';
import { callerTask, type TaskLookupServices } from './caller-task.js';
import type { Call, HandlerAnswer } from './context.js';

/** What `tasks/cancel` uses. */
export interface TasksCancelServices extends TaskLookupServices, CancelServices {}

/**
 * `tasks/cancel` in the neutral form. `finished`: what cancelling a finished task answers, -32602 (`refuse`,
 * 2025-11-25, CNL-1) or an acknowledgement (`acknowledge`, 2026-07-28: cancel is idempotent there).
 */
export interface TaskCancel {
  readonly taskId: string;
  readonly finished: 'refuse' | 'acknowledge';
}

const REASON = 'The task was cancelled by request.';

/**
 * `tasks/cancel` (CNL-1, CNL-2): the task is `cancelled` before the answer; its job is removed from the queue
 * when it has not started (a running one is stopped by its worker, which watches the task's channel).
 * With TASKGATE_REDIS_WAIT_REPLICAS, the answer waits until the replicas hold the cancel, so a failover cannot
 * undo an acknowledged cancel; when they do not confirm in time, the answer is 503 with Retry-After (the cancel
 * may or may not stand: a retry tells). Answers the cancelled task, or nothing when the revision acknowledges.
 */
export async function tasksCancel(ctx: Call<TasksCancelServices>, params: TaskCancel): Promise<HandlerAnswer> {
  const { task: record } = await callerTask(ctx, params.taskId, false);
  const { services } = ctx;
  if (params.finished === 'acknowledge') {
    if (isTerminalStatus(record.status)) {
      await services.tasks.confirmReplicated(record.taskId);
      return { kind: 'result', result: {} };
    }
    await services.tasks.cancelAsBroker(record, REASON);
  }
  const task = params.finished === 'refuse' ? await services.tasks.cancel(ctx.owner, params.taskId, REASON) : undefined;
  ctx.logger.info(
    { audit: 'task.cancelled', taskId: record.taskId, tool: record.tool, owner: record.ownerId },
    'task cancelled',
  );
  await removeWaitingJob(services, record.tool, record.taskId, ctx);
  await services.tasks.confirmReplicated(record.taskId);
  return { kind: 'result', result: task ?? {} };
}
