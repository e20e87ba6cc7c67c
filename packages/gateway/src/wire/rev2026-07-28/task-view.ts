import type { StoredResult, StoredTask } from '@taskgate/core';
import { ErrorCode, isTerminalStatus } from '@taskgate/protocol';
import { type InputRequestsView, type InputServices, requestsOfWaitingTask } from '../../methods/pending-inputs.js';

/**
 * A task record projected on the 2026-07-28 wire (tasks extension): `ttlMs`, `pollIntervalMs`, no `ttl` or
 * `pollInterval`. A tool that ran and reported an error is `completed` here (its result carries `isError`);
 * `failed` is kept for JSON-RPC errors.
 */
export function taskFields(task: StoredTask, outcome?: StoredResult): Record<string, unknown> {
  const status = task.status === 'failed' && outcome !== undefined && 'result' in outcome ? 'completed' : task.status;
  return {
    taskId: task.taskId,
    status,
    createdAt: new Date(task.createdAt).toISOString(),
    lastUpdatedAt: new Date(task.lastUpdatedAt).toISOString(),
    ttlMs: Math.round(task.ttl),
    ...(task.pollInterval !== undefined && { pollIntervalMs: Math.round(task.pollInterval) }),
    ...(task.statusMessage !== undefined && { statusMessage: task.statusMessage }),
  };
}

/** `CreateTaskResult` of the tasks extension: flat, `resultType: "task"`. */
export function createTaskResult(task: StoredTask): Record<string, unknown> {
  return { resultType: 'task', ...taskFields(task) };
}

/** `tasks/get` (DetailedTask): the fields, and the outcome inlined — `result`, `error` or `inputRequests`. */
export function detailedTask(
  task: StoredTask,
  outcome: StoredResult | undefined,
  inputRequests: InputRequestsView | undefined,
): Record<string, unknown> {
  const fields = taskFields(task, outcome);
  const inlined =
    outcome === undefined
      ? inputRequests !== undefined && task.status === 'input_required'
        ? { inputRequests }
        : task.status === 'cancelled' || task.status === 'failed'
          ? task.status === 'failed'
            ? {
                error: {
                  code: ErrorCode.InternalError,
                  message: task.statusMessage ?? 'The task failed without a result',
                },
              }
            : {}
          : {}
      : 'result' in outcome
        ? { result: { ...withoutRelatedTask(outcome.result), resultType: 'complete' } }
        : { error: outcome.error };
  return { resultType: 'complete', ...fields, ...inlined };
}

function withoutRelatedTask(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result._meta as Record<string, unknown> | undefined;
  if (meta === undefined || !('io.modelcontextprotocol/related-task' in meta)) return result;
  const { 'io.modelcontextprotocol/related-task': _drop, ...rest } = meta;
  return Object.keys(rest).length === 0 ? { ...result, _meta: undefined } : { ...result, _meta: rest };
}

/** A task as `notifications/tasks` shows it, like `tasks/get`: its outcome or pending input requests inlined. */
export async function detailedView(
  services: InputServices & {
    readonly tasks: { readWithOutcome(taskId: string): Promise<{ outcome?: StoredResult }> };
  },
  task: StoredTask,
): Promise<Record<string, unknown>> {
  const { outcome } = isTerminalStatus(task.status) ? await services.tasks.readWithOutcome(task.taskId) : {};
  const inputs = task.status === 'input_required' ? await requestsOfWaitingTask(services, task.taskId) : undefined;
  return detailedTask(task, outcome, inputs);
}
