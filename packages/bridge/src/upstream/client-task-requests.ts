import type { CreateTaskResult } from '@modelcontextprotocol/sdk/experimental/tasks';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  type ClientNotification,
  type ClientRequest,
  ErrorCode,
  McpError,
  type Result,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type Logger } from '@taskgate/core';
import type { RoutedCall } from './call-routes.js';
import type { ClientTaskStore, TaskError } from './client-task-store.js';

/**
 * What the bridge's client declares toward upstreams (2025-11-25): it takes elicitation and sampling requests as
 * client tasks, lists them and cancels them (`tasks/get` and `tasks/result` come with any of these).
 */
export const CLIENT_TASKS_CAPABILITY = {
  list: {},
  cancel: {},
  requests: { elicitation: { create: {} }, sampling: { createMessage: {} } },
};

/** Asks taskgate's client for the answer; the signal, when given, withdraws the question. */
export type Ask = (signal?: AbortSignal) => Promise<Result>;

export interface TaskRequestDeps {
  readonly store: ClientTaskStore;
  readonly logger: Logger;
  readonly server: string;
}

type Extra = Pick<RequestHandlerExtra<ClientRequest, ClientNotification>, 'taskStore' | 'taskRequestedTtl'>;

/** The params without the upstream's `task`: the question taskgate's client gets is a request of taskgate's task. */
export function withoutTask<P extends object>(params: P): P {
  if (!('task' in params)) return params;
  const { task: _task, ...rest } = params as { task?: unknown };
  return rest as P;
}

/** An error of the question as the JSON-RPC error a failed task answers `tasks/result` with. */
function taskErrorOf(error: unknown): TaskError {
  if (error instanceof McpError) {
    const message = error.message.replace(/^MCP error -?\d+: /, '');
    return error.data === undefined ? { code: error.code, message } : { code: error.code, message, data: error.data };
  }
  const code = (error as { code?: unknown }).code;
  return { code: typeof code === 'number' ? code : ErrorCode.InternalError, message: errorMessage(error) };
}

/**
 * An upstream's elicitation or sampling request: asked at once when it is plain; when it carries `task` (CLT-1),
 * answered at once with a CreateTaskResult while taskgate's client is asked in the background. The answer
 * becomes the task's result and an error its failure; the SDK's Protocol serves the upstream's `tasks/get`,
 * `tasks/result` (it blocks until the task ends), `tasks/list` and `tasks/cancel` from the store. Cancelling the
 * task, or the end of the call that asked, withdraws the question.
 */
export async function answerRequest(
  deps: TaskRequestDeps,
  call: RoutedCall,
  params: { task?: unknown },
  extra: Extra,
  waiting: 'working' | 'input_required',
  ask: Ask,
): Promise<Result | CreateTaskResult> {
  if (params.task === undefined) return await ask();
  const scoped = extra.taskStore;
  if (scoped === undefined) throw new McpError(ErrorCode.InternalError, 'The bridge keeps no tasks on this connection');
  const { store, logger, server } = deps;
  const created = await scoped.createTask({ ttl: extra.taskRequestedTtl ?? null });
  const taskId = created.taskId;
  // A question for a person waits for input; a sampling request is work the client does.
  if (waiting === 'input_required') await store.updateTaskStatus(taskId, waiting);
  const signal = AbortSignal.any([call.ended, store.cancelled(taskId)]);
  call.ended.addEventListener('abort', () => store.forget(taskId), { once: true });
  const settle = async (): Promise<void> => {
    let result: Result;
    try {
      result = await ask(signal);
    } catch (error) {
      // Cancelled by the upstream (its status says so already), or dropped with its call.
      if (signal.aborted) return;
      const failure = taskErrorOf(error);
      store.keepError(taskId, failure);
      await scoped.updateTaskStatus(taskId, 'failed', failure.message);
      return;
    }
    await scoped.storeTaskResult(taskId, 'completed', result);
  };
  settle().catch((error: unknown) =>
    // The task ended or was dropped meanwhile (cancelled, ttl passed): nobody reads this answer.
    logger.debug({ server, err: errorMessage(error) }, 'answer of an upstream client task not kept'),
  );
  return { task: (await store.getTask(taskId)) ?? created };
}
