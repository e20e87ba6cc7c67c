import { ErrorCode, ProtocolError, parseClientRequestParams } from '@taskgate/protocol';
import { completionComplete } from '../../methods/completion-complete.js';
import type { Reply, RpcContext } from '../../methods/context.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import { resourcesList, resourcesRead, resourceTemplatesList } from '../../methods/resources.js';
import { toolsList } from '../../methods/tools-list.js';
import type { StatelessContext } from './context.js';
import { discover } from './discover.js';
import { READ_METHODS, readAnswer, readRound } from './read-rounds.js';
import { statelessTasksCancel, statelessTasksGet, statelessTasksUpdate } from './tasks-methods.js';
import { statelessToolsCall } from './tools-call.js';

type Shared = (ctx: RpcContext, params: never) => Promise<Reply>;

/** Methods both revisions answer with the same handler; the 2026 answer adds `resultType` (and cache hints). */
const SHARED: Readonly<Record<string, { readonly handler: Shared; readonly cacheable: boolean }>> = {
  'tools/list': { handler: toolsList, cacheable: true },
  'resources/list': { handler: resourcesList, cacheable: true },
  'resources/templates/list': { handler: resourceTemplatesList, cacheable: true },
  'resources/read': { handler: resourcesRead, cacheable: true },
  'prompts/list': { handler: promptsList, cacheable: true },
  'prompts/get': { handler: promptsGet, cacheable: false },
  'completion/complete': { handler: completionComplete, cacheable: false },
};

type Own = (
  ctx: StatelessContext,
  params: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Record<string, unknown>>;

/** Methods only revision 2026-07-28 has, or answers its own way. */
const OWN: Readonly<Record<string, Own>> = {
  'server/discover': async (ctx) => discover(ctx.services.options),
  'tools/call': statelessToolsCall,
  'tasks/get': statelessTasksGet,
  'tasks/update': statelessTasksUpdate,
  'tasks/cancel': statelessTasksCancel,
};

/** True for a method this wire answers (as JSON; `subscriptions/listen` streams and is handled before). */
export function answersMethod(method: string): boolean {
  return method in SHARED || method in OWN;
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
  const own = OWN[method];
  if (own !== undefined) return own(ctx, params, signal);
  const shared = SHARED[method];
  if (shared === undefined) throw new Error(`no handler for ${method}`);
  // A read may ask for input in rounds: it gets the answers so far, and may answer input_required.
  const round = READ_METHODS.has(method) ? readRound(ctx, method, params) : undefined;
  const scoped: RpcContext = round === undefined ? ctx : { ...ctx, readInput: { answers: round.answers } };
  const asked =
    round === undefined ? params : { ...round.params, ...(params._meta !== undefined && { _meta: params._meta }) };
  const reply = await shared
    .handler(scoped, parseClientRequestParams(method, asked) as never)
    .catch((error: unknown) => {
      // SEP-2164: an unknown resource is -32602 on this revision (-32002 on 2025-11-25).
      if (error instanceof ProtocolError && error.code === ErrorCode.ResourceNotFound) {
        throw new ProtocolError(ErrorCode.InvalidParams, error.message, error.data);
      }
      throw error;
    });
  if (reply.kind !== 'result') throw new Error(`${method} answered as a stream`);
  const asking = round === undefined ? undefined : readAnswer(ctx, round, reply.result);
  if (asking !== undefined) return asking;
  return {
    ...reply.result,
    resultType: 'complete',
    ...(shared.cacheable && { ttlMs: 0, cacheScope: 'private' }),
  };
}
