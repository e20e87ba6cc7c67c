import { completionComplete } from '../../methods/completion-complete.js';
import type { HandlerAnswer } from '../../methods/context.js';
import { promptsGet, promptsList } from '../../methods/prompts.js';
import { resourcesList, resourcesRead, resourceTemplatesList } from '../../methods/resources.js';
import { tasksCancel } from '../../methods/tasks-cancel.js';
import { tasksGet } from '../../methods/tasks-get.js';
import { tasksUpdate } from '../../methods/tasks-update.js';
import { toolsList } from '../../methods/tools-list.js';
import { rev2026ToolsCall } from './call-rounds.js';
import { decodeParams, encode, encodeError, type Rev2026Params } from './codec.js';
import type { Rev2026Context } from './context.js';
import { discover } from './discover.js';
import { READ_METHODS, readAnswer, readRound } from './read-rounds.js';

type Answered = Exclude<keyof Rev2026Params, 'tools/call'>;
type Handlers = { [M in Answered]: (ctx: Rev2026Context, params: Rev2026Params[M]) => Promise<HandlerAnswer> };

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
  ctx: Rev2026Context,
  params: Record<string, unknown>,
): Promise<HandlerAnswer> {
  return HANDLERS[method](ctx, decodeParams(method, params, ctx.meta));
}

/**
 * Answers one stateless request with a result carrying `resultType` (`subscriptions/listen` streams and is
 * run before). A read may ask for input in rounds: its handler gets the answers so far, and the request may
 * answer `input_required`.
 */
export async function dispatchRev2026(
  ctx: Rev2026Context,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const method = ctx.request.method;
  if (method === 'server/discover') return discover(ctx.services.options);
  if (method === 'tools/call') return rev2026ToolsCall(ctx, decodeParams('tools/call', params, ctx.meta), signal);
  if (!Object.hasOwn(HANDLERS, method)) throw new Error(`no handler for ${method}`);
  const answered = method as Answered;
  const round = READ_METHODS.has(method) ? readRound(ctx, method, params) : undefined;
  const scoped: Rev2026Context = round === undefined ? ctx : { ...ctx, readInput: { answers: round.answers } };
  const asked =
    round === undefined ? params : { ...round.params, ...(params._meta !== undefined && { _meta: params._meta }) };
  const outcome = await handle(answered, scoped, asked).catch((error: unknown) => {
    throw encodeError(error);
  });
  const asking = round === undefined || outcome.kind !== 'result' ? undefined : readAnswer(ctx, round, outcome.result);
  return asking ?? encode(method, outcome);
}
