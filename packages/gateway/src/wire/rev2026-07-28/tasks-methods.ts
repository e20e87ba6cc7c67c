import { type StoredTask, taskNotFound } from '@taskgate/core';
import { ErrorCode, isTerminalStatus, ProtocolError, TASKS_EXTENSION } from '@taskgate/protocol';
import { removeWaitingJob } from '../../tasks/cancel-call.js';
import { answerInputs, declaresTasks, pendingInputs, type StatelessContext, visibleTask } from './context.js';
import { detailedTask } from './task-view.js';

const ACK = { resultType: 'complete' } as const;

/** The tasks methods answer only requests that declare the tasks extension (-32021 otherwise). */
function requireTasks(ctx: StatelessContext): void {
  if (declaresTasks(ctx)) return;
  throw new ProtocolError(
    ErrorCode.MissingClientCapability,
    `Missing required client capability: ${ctx.request.method} needs the ${TASKS_EXTENSION} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

function taskIdOf(params: Record<string, unknown>): string {
  if (typeof params.taskId !== 'string')
    throw ProtocolError.invalidParams('Invalid params: params.taskId must be a string');
  return params.taskId;
}

async function requireTask(ctx: StatelessContext, taskId: string) {
  const task = await visibleTask(ctx, taskId);
  if (task !== undefined) return task;
  ctx.services.metrics.lookupFailure(ctx.request.method);
  ctx.logger.warn(
    { audit: 'task.lookup_failed', taskId: taskId.slice(0, 64), method: ctx.request.method },
    'task look-up failed',
  );
  throw taskNotFound();
}

/** `tasks/get`: the task with its outcome inlined (`result`, `error`) or its pending `inputRequests`. */
export async function statelessTasksGet(ctx: StatelessContext, params: Record<string, unknown>) {
  requireTasks(ctx);
  return detailedView(ctx, await requireTask(ctx, taskIdOf(params)));
}

/** A task as `tasks/get` and `notifications/tasks` show it: its outcome or pending input requests inlined. */
export async function detailedView(ctx: StatelessContext, task: StoredTask): Promise<Record<string, unknown>> {
  const { outcome } = isTerminalStatus(task.status) ? await ctx.services.tasks.readWithOutcome(task.taskId) : {};
  const inputs = task.status === 'input_required' ? await pendingInputs(ctx, task.taskId) : undefined;
  return detailedTask(task, outcome, inputs);
}

/**
 * `tasks/update`: answers the task's pending input requests from `inputResponses`, by key. Unknown keys and
 * keys answered before are ignored; requests left unanswered keep the task `input_required`.
 */
export async function statelessTasksUpdate(ctx: StatelessContext, params: Record<string, unknown>) {
  requireTasks(ctx);
  const task = await requireTask(ctx, taskIdOf(params));
  const answered = await answerInputs(ctx, task, params.inputResponses);
  ctx.logger.info({ audit: 'task.input_answered', taskId: task.taskId, answered }, 'task input answered');
  return ACK;
}

/** `tasks/cancel`: an acknowledgement, also for a task that has finished already (idempotent). */
export async function statelessTasksCancel(ctx: StatelessContext, params: Record<string, unknown>) {
  requireTasks(ctx);
  const task = await requireTask(ctx, taskIdOf(params));
  if (!isTerminalStatus(task.status)) {
    await ctx.services.tasks.cancelAsBroker(task, 'The task was cancelled by request.');
    ctx.logger.info(
      { audit: 'task.cancelled', taskId: task.taskId, tool: task.tool, owner: task.ownerId },
      'task cancelled',
    );
    await removeWaitingJob(ctx.services, task.tool, task.taskId, ctx);
  }
  return ACK;
}
