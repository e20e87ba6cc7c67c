import {
  type EventLog,
  Keys,
  type Logger,
  queuesOfTask,
  type StoredTask,
  type TaskRef,
  type TaskStore,
  type ToolCatalog,
  type ToolQueues,
} from '@taskgate/core';

/** What cancelling a call or a task uses: the task store, and the tool's queue to remove a waiting job from. */
export interface CancelServices {
  readonly tasks: TaskStore;
  readonly catalog: ToolCatalog;
  readonly queues: ToolQueues;
  readonly logger: Logger;
}

/** What cancelling an abandoned direct call uses besides: the streams' connection state, and the grace period. */
export interface AbandonServices extends CancelServices {
  readonly events: EventLog;
  readonly options: { readonly directCallCancelGraceMs: number };
}

/**
 * The client's connection to a direct call's stream ended without the response: cancel the call after the
 * grace period unless, by then, the stream was resumed on some pod (a connection holds it again) or is done.
 */
export function cancelUnlessResumed(
  services: AbandonServices,
  task: StoredTask,
  streamId: string,
  logger: Logger,
): void {
  const timer = setTimeout(() => {
    void (async () => {
      if (await services.events.connected(streamId)) return;
      if ((await services.events.state(streamId))?.done === true) return;
      const ref = { taskId: task.taskId, ownerId: task.ownerId };
      const reason = `The client closed the stream of this call and did not resume it within ${services.options.directCallCancelGraceMs} ms`;
      await cancelCall(services, ref, task.tool, reason, logger);
    })().catch((error: unknown) =>
      logger.warn(
        { taskId: task.taskId, err: error instanceof Error ? error.message : String(error) },
        'cancel failed',
      ),
    );
  }, services.options.directCallCancelGraceMs);
  timer.unref();
}

/** Cancels a direct call on the broker's behalf and removes its job if it has not started. */
export async function cancelCall(
  services: CancelServices,
  ref: TaskRef,
  tool: string | undefined,
  reason: string,
  logger: Logger,
): Promise<void> {
  try {
    const result = await services.tasks.cancelAsBroker(ref, reason);
    if (!result.ok) return;
    logger.info({ audit: 'call.cancelled', taskId: ref.taskId, tool, reason }, 'direct call cancelled');
    await removeWaitingJob(services, tool, ref.taskId);
  } catch (error) {
    logger.warn({ taskId: ref.taskId, err: error instanceof Error ? error.message : String(error) }, 'cancel failed');
  }
}

/** Removes the not-yet-started job of a cancelled task; failures are logged, never surfaced. */
export async function removeWaitingJob(
  services: CancelServices,
  tool: string | undefined,
  taskId: string,
  ctx?: { readonly logger: Logger },
): Promise<void> {
  if (tool === undefined) return;
  try {
    const entry = await services.catalog.get(tool);
    // The job is on the task's shard (a pure function of its id), whichever gateway enqueued it; a job enqueued
    // before the shard count changed is on its shard under the old count.
    const queue = entry?.queue ?? Keys.toolQueueName(tool);
    const counts = [entry?.queueShards ?? 1, ...(await services.catalog.shardCounts(queue)).map((c) => c.shards)];
    await services.queues.removeWaitingFromAny(queuesOfTask(queue, counts, taskId), taskId);
  } catch (error) {
    (ctx?.logger ?? services.logger).warn(
      { taskId, tool, err: error instanceof Error ? error.message : String(error) },
      'could not remove the job of a cancelled task',
    );
  }
}
