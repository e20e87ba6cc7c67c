import { type ClientRequestMethod, type ClientRequestParams, parseClientRequestParams } from '@taskgate/protocol';
import { completionComplete } from '../../methods/completion-complete.js';
import type { Reply, RpcContext } from '../../methods/context.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import {
  resourcesList,
  resourcesRead,
  resourcesSubscribe,
  resourcesUnsubscribe,
  resourceTemplatesList,
} from '../../methods/resources.js';
import { tasksCancel, tasksGet, tasksList } from '../../methods/tasks-methods.js';
import { tasksResult } from '../../methods/tasks-result.js';
import { toolsCall } from '../../methods/tools-call.js';
import { toolsList } from '../../methods/tools-list.js';

type SessionMethod = Exclude<ClientRequestMethod, 'initialize'>;
type Handlers = { [M in SessionMethod]: (ctx: RpcContext, params: ClientRequestParams<M>) => Promise<Reply> };

const empty: Reply = { kind: 'result', result: {} };

const handlers: Handlers = {
  ping: async () => empty,
  'logging/setLevel': async (ctx, params) => {
    await ctx.services.sessions.setLogLevel(ctx.session.sessionId, params.level);
    return empty;
  },
  'tools/list': toolsList,
  'tools/call': toolsCall,
  'tasks/get': tasksGet,
  'tasks/result': tasksResult,
  'tasks/list': tasksList,
  'tasks/cancel': tasksCancel,
  'resources/list': resourcesList,
  'resources/templates/list': resourceTemplatesList,
  'resources/read': resourcesRead,
  'resources/subscribe': resourcesSubscribe,
  'resources/unsubscribe': resourcesUnsubscribe,
  'prompts/list': promptsList,
  'prompts/get': promptsGet,
  'completion/complete': completionComplete,
};

function handle<M extends SessionMethod>(method: M, ctx: RpcContext): Promise<Reply> {
  // Validates the params first: -32601 for a method we do not answer, -32602 naming what does not fit.
  const params = parseClientRequestParams(method, ctx.request.params);
  return handlers[method](ctx, params);
}

/**
 * Answers one request of an established session. Throws a ProtocolError (or anything else, which the caller
 * maps to -32603 without leaking it) when the request fails.
 */
export function dispatch(ctx: RpcContext): Promise<Reply> {
  return handle(ctx.request.method as SessionMethod, ctx);
}
