import {
  ErrorCode,
  ProtocolError,
  parseClientRequestParams,
  parseUpdateTaskParams,
  TASKS_EXTENSION,
} from '@taskgate/protocol';
import { completionComplete } from '../../methods/completion-complete.js';
import type { Outcome } from '../../methods/context.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import { resourcesList, resourcesRead, resourceTemplatesList } from '../../methods/resources.js';
import { tasksCancel } from '../../methods/tasks-cancel.js';
import { tasksGet } from '../../methods/tasks-get.js';
import { tasksUpdate } from '../../methods/tasks-update.js';
import { toolsList } from '../../methods/tools-list.js';
import { statelessToolsCall } from './call-rounds.js';
import { declaresTasks, type StatelessContext } from './context.js';
import { discover } from './discover.js';
import { READ_METHODS, readAnswer, readRound } from './read-rounds.js';
import { detailedTask } from './task-view.js';

type Run = (ctx: StatelessContext, params: Record<string, unknown>) => Promise<Outcome>;

/**
 * The methods of this revision that answer through a neutral handler, each decoded with the protocol's
 * schemas, and whether the answer may be cached (`ttlMs`, `cacheScope`). A task is shown with its outcome
 * inlined; cancelling a finished task is acknowledged.
 */
const METHODS: Readonly<Record<string, { readonly run: Run; readonly cacheable: boolean }>> = {
  'tools/list': { run: (ctx, p) => toolsList(ctx, parseClientRequestParams('tools/list', p)), cacheable: true },
  'resources/list': {
    run: (ctx, p) => resourcesList(ctx, parseClientRequestParams('resources/list', p)),
    cacheable: true,
  },
  'resources/templates/list': {
    run: (ctx, p) => resourceTemplatesList(ctx, parseClientRequestParams('resources/templates/list', p)),
    cacheable: true,
  },
  'resources/read': {
    run: (ctx, p) => resourcesRead(ctx, parseClientRequestParams('resources/read', p)),
    cacheable: true,
  },
  'prompts/list': { run: (ctx, p) => promptsList(ctx, parseClientRequestParams('prompts/list', p)), cacheable: true },
  'prompts/get': { run: (ctx, p) => promptsGet(ctx, parseClientRequestParams('prompts/get', p)), cacheable: false },
  'completion/complete': {
    run: (ctx, p) => completionComplete(ctx, parseClientRequestParams('completion/complete', p)),
    cacheable: false,
  },
  'tasks/get': {
    run: (ctx, p) => tasksGet(ctx, { taskId: parseClientRequestParams('tasks/get', p).taskId, detailed: true }),
    cacheable: false,
  },
  'tasks/update': {
    run: (ctx, p) => {
      const params = parseUpdateTaskParams(p);
      return tasksUpdate(ctx, { taskId: params.taskId, inputResponses: params.inputResponses });
    },
    cacheable: false,
  },
  'tasks/cancel': {
    run: (ctx, p) =>
      tasksCancel(ctx, { taskId: parseClientRequestParams('tasks/cancel', p).taskId, finished: 'acknowledge' }),
    cacheable: false,
  },
};

/** The methods that exist only with the tasks extension declared (-32021 otherwise). */
const TASK_METHODS: ReadonlySet<string> = new Set(['tasks/get', 'tasks/update', 'tasks/cancel']);

/** True for a method this wire answers (as JSON; `subscriptions/listen` streams and is handled before). */
export function answersMethod(method: string): boolean {
  return method in METHODS || method === 'server/discover' || method === 'tools/call';
}

/**
 * Answers one stateless request with a result carrying `resultType`. Methods 2026-07-28 removed
 * (`initialize`, `ping`, `logging/setLevel`, `resources/subscribe`, `tasks/result`, `tasks/list`, …) are not
 * here: the caller answers them -32601 with HTTP 404.
 */
export async function dispatchStateless(
  ctx: StatelessContext,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const method = ctx.request.method;
  if (method === 'server/discover') return discover(ctx.services.options);
  if (method === 'tools/call') return statelessToolsCall(ctx, params, signal);
  const entry = METHODS[method];
  if (entry === undefined) throw new Error(`no handler for ${method}`);
  if (TASK_METHODS.has(method) && !declaresTasks(ctx)) {
    throw new ProtocolError(
      ErrorCode.MissingClientCapability,
      `Missing required client capability: ${method} needs the ${TASKS_EXTENSION} extension`,
      { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
    );
  }
  // A read may ask for input in rounds: it gets the answers so far, and may answer input_required.
  const round = READ_METHODS.has(method) ? readRound(ctx, method, params) : undefined;
  const scoped: StatelessContext = round === undefined ? ctx : { ...ctx, readInput: { answers: round.answers } };
  const asked =
    round === undefined ? params : { ...round.params, ...(params._meta !== undefined && { _meta: params._meta }) };
  const outcome = await entry.run(scoped, asked).catch((error: unknown) => {
    // SEP-2164: an unknown resource is -32602 on this revision (-32002 on 2025-11-25).
    if (error instanceof ProtocolError && error.code === ErrorCode.ResourceNotFound) {
      throw new ProtocolError(ErrorCode.InvalidParams, error.message, error.data);
    }
    throw error;
  });
  if (outcome.kind === 'view') return detailedTask(outcome.task, outcome.outcome, outcome.inputRequests);
  if (outcome.kind !== 'result') throw new Error(`${method} answered ${outcome.kind}`);
  const asking = round === undefined ? undefined : readAnswer(ctx, round, outcome.result);
  if (asking !== undefined) return asking;
  return {
    ...outcome.result,
    resultType: 'complete',
    ...(entry.cacheable && { ttlMs: 0, cacheScope: 'private' }),
  };
}
