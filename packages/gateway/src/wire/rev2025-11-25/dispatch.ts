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
import { decodeParams, encode, type SessionAnswer, type SessionMethod, type SessionParams } from './codec.js';

/** A request of an established session on revision 2025-11-25. */
export type SessionCall = Call<GatewayServices>;

type Handlers = { [M in SessionMethod]: (ctx: SessionCall, params: SessionParams[M]) => Promise<Outcome> };

/** The methods of a session: each one's handler, which gets its params as the codec decoded them. */
const handlers: Handlers = {
  ping: async () => result({}),
  'logging/setLevel': loggingSetLevel,
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

function handle<M extends SessionMethod>(method: M, ctx: SessionCall): Promise<Outcome> {
  return handlers[method](ctx, decodeParams(method, ctx.request.params));
}

/**
 * Answers one request of an established session. Throws a ProtocolError (or anything else, which the runner
 * maps to -32603 without leaking it) when the request fails.
 */
export async function dispatch(ctx: SessionCall): Promise<SessionAnswer> {
  return encode(await handle(ctx.request.method as SessionMethod, ctx));
}
