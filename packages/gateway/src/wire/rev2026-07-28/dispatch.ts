import { completionComplete } from '../../methods/completion-complete.js';
import type { HandlerAnswer } from '../../methods/context.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import { resourcesList, resourcesRead, resourceTemplatesList } from '../../methods/resources.js';
import { tasksCancel } from '../../methods/tasks-cancel.js';
import { tasksGet } from '../../methods/tasks-get.js';
import { tasksUpdate } from '../../methods/tasks-update.js';
import { toolsList } from '../../methods/tools-list.js';
import { statelessToolsCall } from './call-rounds.js';
import { decodeParams, encode, encodeError, type StatelessParams } from './codec.js';
import type { StatelessContext } from './context.js';
import { discover } from './discover.js';
import { READ_METHODS, readAnswer, readRound } from './read-rounds.js';

type Answered = Exclude<keyof StatelessParams, 'tools/call'>;
type Handlers = { [M in Answered]: (ctx: StatelessContext, params: StatelessParams[M]) => Promise<HandlerAnswer> };

/** The methods of this revision that answer through a neutral handler at once. */
const HANDLERS: Handlers = {
  'tools/list': toolsList,
  'resources/list': resourcesList,
  'resources/templates/list': resourceTemplatesList,
  'resources/read': resourcesRead,
  'prompts/list': promptsList,
  'prompts/get': promptsGet,
  'completion/complete': completionComplete,
  'tasks/get': tasksGet,
  'tasks/update': tasksUpdate,
  'tasks/cancel': tasksCancel,
};

function handle<M extends Answered>(
  method: M,
  ctx: StatelessContext,
  params: Record<string, unknown>,
): Promise<HandlerAnswer> {
  return HANDLERS[method](ctx, decodeParams(method, params, ctx.meta));
}

/**
 * Answers one stateless request with a result carrying `resultType` (`subscriptions/listen` streams and is
 * run before). A read may ask for input in rounds: its handler gets the answers so far, and the request may
 * answer `input_required`.
 */
export async function dispatchStateless(
  ctx: StatelessContext,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const method = ctx.request.method;
  if (method === 'server/discover') return discover(ctx.services.options);
  if (method === 'tools/call') return statelessToolsCall(ctx, decodeParams('tools/call', params, ctx.meta), signal);
  if (!Object.hasOwn(HANDLERS, method)) throw new Error(`no handler for ${method}`);
  const answered = method as Answered;
  const round = READ_METHODS.has(method) ? readRound(ctx, method, params) : undefined;
  const scoped: StatelessContext = round === undefined ? ctx : { ...ctx, readInput: { answers: round.answers } };
  const asked =
    round === undefined ? params : { ...round.params, ...(params._meta !== undefined && { _meta: params._meta }) };
  const outcome = await handle(answered, scoped, asked).catch((error: unknown) => {
    throw encodeError(error);
  });
  const asking = round === undefined || outcome.kind !== 'result' ? undefined : readAnswer(ctx, round, outcome.result);
  return asking ?? encode(method, outcome);
}
