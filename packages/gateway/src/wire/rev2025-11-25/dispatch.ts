import { completionComplete } from '../../methods/completion-complete.js';
import { type Call, type HandlerAnswer, result } from '../../methods/context.js';
import { loggingSetLevel } from '../../methods/logging-set-level.js';
import {
  type OfferingListServices,
  type OfferingReadServices,
  promptsGet,
  promptsList,
} from '../../methods/prompts.js';
import {
  resourcesList,
  resourcesRead,
  resourcesSubscribe,
  resourcesUnsubscribe,
  resourceTemplatesList,
  type SubscribeServices,
} from '../../methods/resources.js';
import { type TasksCancelServices, tasksCancel } from '../../methods/tasks-cancel.js';
import { type TasksGetServices, tasksGet } from '../../methods/tasks-get.js';
import { tasksList } from '../../methods/tasks-list.js';
import { tasksResult } from '../../methods/tasks-result.js';
import { type ToolsCallServices, toolsCall } from '../../methods/tools-call.js';
import { type ToolsListServices, toolsList } from '../../methods/tools-list.js';
import type { GatewayMetrics } from '../../ops/gateway-metrics.js';
import type { ResolvedGatewayOptions } from '../../options.js';
import type { StreamServices } from '../../streams/stream-context.js';
import { decodeParams, encode, type SessionAnswer, type SessionMethod, type SessionParams } from './codec.js';

/**
 * What revision 2025-11-25 uses: its handlers' services as each names them, the streams a request's answer may
 * become, the client's input requests (answered by its responses) and the gateway's options and metrics.
 */
export type SessionServices = ToolsCallServices &
  ToolsListServices &
  TasksGetServices &
  TasksCancelServices &
  OfferingListServices &
  OfferingReadServices &
  SubscribeServices &
  StreamServices & {
    readonly metrics: GatewayMetrics;
    readonly options: ResolvedGatewayOptions;
  };

/** A request of an established session on revision 2025-11-25. */
export type SessionCall = Call<SessionServices>;

type Handlers = { [M in SessionMethod]: (ctx: SessionCall, params: SessionParams[M]) => Promise<HandlerAnswer> };

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

function handle<M extends SessionMethod>(method: M, ctx: SessionCall): Promise<HandlerAnswer> {
  return handlers[method](ctx, decodeParams(method, ctx.request.params));
}

/**
 * Answers one request of an established session. Throws a ProtocolError (or anything else, which the runner
 * maps to -32603 without leaking it) when the request fails.
 */
export async function dispatch(ctx: SessionCall): Promise<SessionAnswer> {
  return encode(await handle(ctx.request.method as SessionMethod, ctx));
}
