import { Keys, type StoredTask, type TaskOutcome, taskNotFound, toTask } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError } from '@taskgate/protocol';
import { removeWaitingJob } from '../tasks/cancel-call.js';
import type { Reply, RpcContext } from './context.js';

/**
 * The caller's task, for tasks/get and tasks/cancel: -32602 when unknown, expired, another owner's (SEC-1)
 * or the hidden record of a direct call. Failed look-ups go to the audit log.
 */
export function ownedTask(ctx: RpcContext, taskId: string): Promise<StoredTask> {
  const read =
    ctx.readAhead?.taskId === taskId
      ? ctx.readAhead.read.then((found) => found.task)
      : ctx.services.tasks.getOwned(ctx.owner, taskId);
  return audited(ctx, taskId, read, (task) => task);
}

/** Like `ownedTask`, with the task's stored outcome (absent until it finished), for tasks/result. */
export function ownedOutcome(
  ctx: RpcContext,
  taskId: string,
): Promise<{ readonly task: StoredTask; readonly outcome?: TaskOutcome }> {
  const read = ctx.readAhead?.taskId === taskId ? ctx.readAhead.read : ctx.services.tasks.outcome(ctx.owner, taskId);
  return audited(ctx, taskId, read, (found) => found.task);
}

async function audited<T>(
  ctx: RpcContext,
  taskId: string,
  lookup: Promise<T>,
  taskOf: (found: T) => StoredTask,
): Promise<T> {
  try {
    const found = await lookup;
    if (taskOf(found).kind === 'direct') throw taskNotFound();
    return found;
  } catch (error) {
    if (error instanceof ProtocolError) {
      ctx.services.metrics.lookupFailure(ctx.request.method);
      ctx.logger.warn(
        { audit: 'task.lookup_failed', taskId: taskId.slice(0, 64), method: ctx.request.method, reason: error.message },
        'task look-up failed',
      );
    }
    throw error;
  }
}

/** `tasks/get` (GET-1): the task's fields at the top level, always as JSON (GET-5), no related-task _meta (META-3). */
export async function tasksGet(ctx: RpcContext, params: ClientRequestParams<'tasks/get'>): Promise<Reply> {
  const task = await ownedTask(ctx, params.taskId);
  return { kind: 'result', result: toTask(task) };
}

/** `tasks/list` (LST-1, LST-2): one page of the caller's tasks with a signed cursor. */
export async function tasksList(ctx: RpcContext, params: ClientRequestParams<'tasks/list'>): Promise<Reply> {
  const page = await ctx.services.tasks.list(ctx.owner, params?.cursor);
  ctx.logger.info(
    {
      audit: 'tasks.listed',
      owner: Keys.ownerId(ctx.owner),
      count: page.tasks.length,
      more: page.nextCursor !== undefined,
    },
    'tasks listed',
  );
  return {
    kind: 'result',
    result: { tasks: page.tasks, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) },
  };
}

/**
 * `tasks/cancel` (CNL-1, CNL-2): the task is `cancelled` before the answer; its job is removed from the queue
 * when it has not started (a running one is stopped by its worker, which watches the task's channel).
 */
export async function tasksCancel(ctx: RpcContext, params: ClientRequestParams<'tasks/cancel'>): Promise<Reply> {
  const record = await ownedTask(ctx, params.taskId);
  const task = await ctx.services.tasks.cancel(ctx.owner, params.taskId, 'The task was cancelled by request.');
  ctx.logger.info(
    { audit: 'task.cancelled', taskId: task.taskId, tool: record.tool, owner: record.ownerId },
    'task cancelled',
  );
  await removeWaitingJob(ctx.services, record.tool, task.taskId, ctx);
  return { kind: 'result', result: task };
}
