import {
  type CatalogEntry,
  queueOfTask,
  type StoredTask,
  type TaskStore,
  type ToolJobData,
  type ToolQueues,
} from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import type { Call } from './context.js';

/** What enqueuing a tool job uses. */
export interface EnqueueServices {
  readonly tasks: TaskStore;
  readonly queues: ToolQueues;
}

/**
 * Enqueues the job of a task or direct call. When that fails the record is failed with a statusMessage at
 * once (never left `working` without a job); returns the failed record then, undefined on success.
 */
export async function enqueue(
  ctx: Call<EnqueueServices>,
  entry: CatalogEntry,
  record: StoredTask,
  args: Record<string, unknown>,
): Promise<StoredTask | undefined> {
  const data: ToolJobData = {
    taskId: record.taskId,
    ownerId: record.ownerId,
    session: record.session ?? null,
    tool: entry.tool.name,
    arguments: args,
    ...(ctx.principal !== undefined && { principal: ctx.principal }),
    client: {
      capabilities: ctx.session.clientCapabilities,
      ...(ctx.session.clientInfo !== undefined && { info: ctx.session.clientInfo }),
    },
  };
  try {
    // One shard of the tool's queue, chosen by the task id: every gateway picks the same one for a task.
    const policy = {
      queue: queueOfTask(entry.queue, entry.queueShards ?? 1, record.taskId),
      attempts: entry.attempts,
      ...(entry.backoffMs !== undefined && { backoffMs: entry.backoffMs }),
    };
    await ctx.services.queues.enqueue(policy, data);
    return undefined;
  } catch (error) {
    ctx.logger.error(
      { taskId: record.taskId, tool: entry.tool.name, err: error instanceof Error ? error.message : String(error) },
      'enqueuing a tool job failed',
    );
    return await failUnqueued(ctx.services.tasks, record);
  }
}

async function failUnqueued(tasks: TaskStore, record: StoredTask): Promise<StoredTask> {
  const message = 'The task could not be queued for a worker; try again later.';
  const finished = await tasks.finish(
    { taskId: record.taskId, ownerId: record.ownerId },
    { error: { code: ErrorCode.InternalError, message } },
    message,
  );
  return finished.ok ? { ...record, ...finished.task } : record;
}
