import { isTerminalStatus } from '@taskgate/protocol';
import { callerTask, type TaskLookupServices } from './caller-task.js';
import type { Call, HandlerAnswer } from './context.js';
import { type InputServices, requestsOfWaitingTask } from './pending-inputs.js';

/** What `tasks/get` uses. */
export interface TasksGetServices extends TaskLookupServices, InputServices {}

/** `tasks/get` in the neutral form: `detailed` when the revision inlines the outcome and the pending input. */
export interface TaskGet {
  readonly taskId: string;
  readonly detailed: boolean;
}

/**
 * `tasks/get` (GET-1): the caller's task, always as JSON (GET-5). A detailed view (2026-07-28) carries the
 * stored outcome of a finished task and the pending input requests of one that waits for input.
 */
export async function tasksGet(ctx: Call<TasksGetServices>, params: TaskGet): Promise<HandlerAnswer> {
  const found = await callerTask(ctx, params.taskId, params.detailed);
  if (!params.detailed) return { kind: 'view', task: found.task };
  const { task } = found;
  const outcome = isTerminalStatus(task.status) ? found.outcome : undefined;
  const inputRequests =
    task.status === 'input_required' ? await requestsOfWaitingTask(ctx.services, task.taskId) : undefined;
  return {
    kind: 'view',
    task,
    ...(outcome !== undefined && { outcome }),
    ...(inputRequests !== undefined && { inputRequests }),
  };
}
