import {
  type CatalogEntry,
  isRedisUnavailable,
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
 * When Redis could not take the job, or the replicas did not confirm the record and the job
 * (TASKGATE_REDIS_WAIT_REPLICAS), the task is not acknowledged at all: the record is discarded and the error
 * thrown (answered with 503 and `Retry-After`). A failed record answered then could be unknown after a
 * failover, as its writes were not confirmed either.
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
    if (isRedisUnavailable(error)) return await discardUnconfirmed(ctx, record, error);
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

/**
 * A task whose job Redis did not take, or whose writes the replicas did not confirm in time. A failover now
 * could lose it, so it is refused:
 * the client is told to retry, and it must then be as if the create never ran. The job was held back and is
 * gone already (ToolQueues.enqueue), so no worker ran it; the record goes here, so its id is unknown and the
 * owner's active count is as before. Left as a failed record instead, it would be an unacknowledged ghost:
 * listed to the owner and, after a failover, present or not depending on how far replication got.
 * Should the removal itself fail (the master gone), the writes are lost with it or their replicas hold a
 * task the client was told to retry: the one case where a retry may run the tool twice.
 */
async function discardUnconfirmed(ctx: Call<EnqueueServices>, record: StoredTask, error: unknown): Promise<never> {
  ctx.logger.warn(
    { taskId: record.taskId, err: error instanceof Error ? error.message : String(error) },
    'task not acknowledged: Redis did not take or replicate its writes in time',
  );
  await ctx.services.tasks.discard({ taskId: record.taskId, ownerId: record.ownerId }).catch(() => {});
  throw error;
}
