import { Keys, type StoredResult, type StoredTask, type TaskStore, taskNotFound } from '@taskgate/core';
import { ProtocolError } from '@taskgate/protocol';
import type { Call } from './context.js';

/** What finding the caller's task uses. */
export interface TaskLookupServices {
  readonly tasks: TaskStore;
  readonly metrics: { lookupFailure(method: string): void };
}

/** A task the caller may see, with its stored outcome when asked for (absent until it finished). */
export interface FoundTask {
  readonly task: StoredTask;
  readonly outcome?: StoredResult;
}

/**
 * The caller's task, for the tasks methods: -32602 when unknown, expired, another owner's (SEC-1) or the
 * hidden record of a direct call. Failed look-ups go to the audit log. `withOutcome` reads the stored outcome
 * in the same read.
 */
export async function callerTask(
  ctx: Call<TaskLookupServices>,
  taskId: string,
  withOutcome: boolean,
): Promise<FoundTask> {
  try {
    const found = await lookup(ctx, taskId, withOutcome);
    if (found.task.kind === 'direct') throw taskNotFound();
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

async function lookup(ctx: Call<TaskLookupServices>, taskId: string, withOutcome: boolean): Promise<FoundTask> {
  const { tasks } = ctx.services;
  if (ctx.readAhead?.taskId === taskId) return ctx.readAhead.read;
  if (ctx.tasksBy === 'owner') {
    return withOutcome ? tasks.outcome(ctx.owner, taskId) : { task: await tasks.getOwned(ctx.owner, taskId) };
  }
  if (taskId.length > 128) throw taskNotFound();
  const found = withOutcome ? await tasks.readWithOutcome(taskId) : { task: await tasks.read(taskId) };
  if (found.task === undefined || !mayRead(ctx, found.task)) throw taskNotFound();
  return found as FoundTask;
}

/** For the record scopes: the owner's task (auth on), or any task revision 2026-07-28 created (auth off). */
function mayRead(ctx: Call<unknown>, task: StoredTask): boolean {
  return ctx.tasksBy === 'id' ? task.wire === '2026-07-28' : task.ownerId === Keys.ownerId(ctx.owner);
}

/**
 * The record of a task the caller may see, or undefined (no error, no audit): for following many tasks at
 * once (`subscriptions/listen`).
 */
export async function visibleTask(ctx: Call<TaskLookupServices>, taskId: string): Promise<StoredTask | undefined> {
  if (typeof taskId !== 'string' || taskId.length > 128) return undefined;
  const task = await ctx.services.tasks.read(taskId);
  return task !== undefined && task.kind === 'task' && mayRead(ctx, task) ? task : undefined;
}
