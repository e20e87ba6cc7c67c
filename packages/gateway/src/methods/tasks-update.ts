import { callerTask, type TaskLookupServices } from './caller-task.js';
import type { Call, HandlerAnswer } from './context.js';
import { answerInputs, type InputServices } from './pending-inputs.js';

/** What `tasks/update` uses. */
export interface TasksUpdateServices extends TaskLookupServices, InputServices {}

/** `tasks/update` in the neutral form: the answers to the task's input requests, by key. */
export interface TaskUpdate {
  readonly taskId: string;
  readonly inputResponses: unknown;
}

/**
 * `tasks/update`: answers the task's pending input requests from `inputResponses`, by key. Unknown keys and
 * keys answered before are ignored; requests left unanswered keep the task `input_required`.
 */
export async function tasksUpdate(ctx: Call<TasksUpdateServices>, params: TaskUpdate): Promise<HandlerAnswer> {
  const { task } = await callerTask(ctx, params.taskId, false);
  const answered = await answerInputs(ctx.services, task, params.inputResponses);
  ctx.logger.info({ audit: 'task.input_answered', taskId: task.taskId, answered }, 'task input answered');
  return { kind: 'result', result: {} };
}
