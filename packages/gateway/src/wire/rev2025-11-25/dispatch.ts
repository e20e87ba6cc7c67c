import { type StoredTask, toTask } from '@taskgate/core';
import {
  type ClientRequestMethod,
  type ClientRequestParams,
  MODEL_IMMEDIATE_RESPONSE_META_KEY,
  parseClientRequestParams,
} from '@taskgate/protocol';
import { completionComplete } from '../../methods/completion-complete.js';
import { type Call, type Outcome, result } from '../../methods/context.js';
import { loggingSetLevel } from '../../methods/logging-set-level.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import {
  resourcesList,
  resourcesRead,
  resourcesSubscribe,
  resourcesUnsubscribe,
  resourceTemplatesList,
} from '../../methods/resources.js';
import { tasksCancel } from '../../methods/tasks-cancel.js';
import { tasksGet } from '../../methods/tasks-get.js';
import { tasksList } from '../../methods/tasks-list.js';
import { tasksResult } from '../../methods/tasks-result.js';
import { toolsCall } from '../../methods/tools-call.js';
import { toolsList } from '../../methods/tools-list.js';
import type { GatewayServices } from '../services.js';

/** A request of an established session on revision 2025-11-25. */
export type SessionCall = Call<GatewayServices>;

/** How an answer goes out on this revision: a result sent as JSON, or a resumable SSE stream that ends with the response. */
export type Reply =
  | { readonly kind: 'result'; readonly result: Record<string, unknown> }
  | {
      readonly kind: 'stream';
      /** Which streams `close()` ends at once (`result`) and which it lets finish first (`direct`). */
      readonly role: 'result' | 'direct';
      /** The task (or direct call's hidden record) whose messages and outcome the stream carries, as read. */
      readonly task: StoredTask;
    };

type SessionMethod = Exclude<ClientRequestMethod, 'initialize'>;
type Handlers = { [M in SessionMethod]: (ctx: SessionCall, params: ClientRequestParams<M>) => Promise<Outcome> };

/**
 * The methods of a session, each decoded into its handler's neutral params. A task is asked for with the
 * `task` param; tasks/get shows the task alone; cancelling a finished task is refused (CNL-1).
 */
const handlers: Handlers = {
  ping: async () => result({}),
  'logging/setLevel': loggingSetLevel,
  'tools/list': toolsList,
  'tools/call': (ctx, params) =>
    toolsCall(ctx, {
      name: params.name,
      arguments: params.arguments ?? {},
      ...(params._meta?.progressToken !== undefined && { progressToken: params._meta.progressToken }),
      task:
        params.task === undefined
          ? { kind: 'none' }
          : { kind: 'param', ...(params.task.ttl !== undefined && { ttl: params.task.ttl }) },
    }),
  'tasks/get': (ctx, params) => tasksGet(ctx, { taskId: params.taskId, detailed: false }),
  'tasks/result': tasksResult,
  'tasks/list': tasksList,
  'tasks/cancel': (ctx, params) => tasksCancel(ctx, { taskId: params.taskId, finished: 'refuse' }),
  'resources/list': resourcesList,
  'resources/templates/list': resourceTemplatesList,
  'resources/read': resourcesRead,
  'resources/subscribe': resourcesSubscribe,
  'resources/unsubscribe': resourcesUnsubscribe,
  'prompts/list': promptsList,
  'prompts/get': promptsGet,
  'completion/complete': completionComplete,
};

function handle<M extends SessionMethod>(method: M, ctx: SessionCall): Promise<Outcome> {
  // Validates the params first: -32601 for a method we do not answer, -32602 naming what does not fit.
  const params = parseClientRequestParams(method, ctx.request.params);
  return handlers[method](ctx, params);
}

/**
 * Answers one request of an established session. Throws a ProtocolError (or anything else, which the caller
 * maps to -32603 without leaking it) when the request fails.
 */
export async function dispatch(ctx: SessionCall): Promise<Reply> {
  return encode(await handle(ctx.request.method as SessionMethod, ctx));
}

/**
 * An outcome on this revision: `CreateTaskResult` with `task` (and the tool's immediate response, CRT-5);
 * the task's fields at the top level for tasks/get (no related-task _meta, META-3); a running call, or a
 * task whose result is awaited, as a resumable SSE stream that relays its requests and notices.
 */
function encode(outcome: Outcome): Reply {
  switch (outcome.kind) {
    case 'result':
      return outcome;
    case 'task': {
      const immediate = outcome.immediateResponse;
      const meta = immediate === undefined ? undefined : { _meta: { [MODEL_IMMEDIATE_RESPONSE_META_KEY]: immediate } };
      return { kind: 'result', result: { task: toTask(outcome.task), ...meta } };
    }
    case 'view':
      return { kind: 'result', result: toTask(outcome.task) };
    case 'call':
      return { kind: 'stream', role: 'direct', task: outcome.task };
    case 'pending':
      return { kind: 'stream', role: 'result', task: outcome.task };
  }
}
