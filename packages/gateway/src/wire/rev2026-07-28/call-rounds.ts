import { Keys, type StoredTask } from '@taskgate/core';
import { isTerminalStatus, LoggingLevelSchema, type ProgressToken, ProtocolError } from '@taskgate/protocol';
import { answerInputs, type InputRequestsView, pendingInputs, pendingRound } from '../../methods/pending-inputs.js';
import { toolsCall } from '../../methods/tools-call.js';
import { removeWaitingJob } from '../../tasks/cancel-call.js';
import { RoundWake } from '../../tasks/round-wake.js';
import { type CallRound, encode } from './codec.js';
import { type Rev2026Context, requestStates } from './context.js';
import { CallNotices } from './notices.js';
import { checkParamHeaders } from './param-headers.js';
import { createTaskResult } from './task-view.js';

/** How long a `requestState` stays valid: the input a round asks for must come back within it. */
const REQUEST_STATE_TTL_MS = 10 * 60_000;

/**
 * `tools/call` on revision 2026-07-28. The server decides task-ness per tool: with the tasks extension
 * declared, a tool whose `taskSupport` allows it becomes a task (flat `CreateTaskResult`); everything else runs
 * as a call whose answer waits here. A call that needs input answers `input_required` with the pending
 * requests and a signed `requestState`; the next round brings `inputResponses` and the state, and the same
 * call goes on. The codec lifted the round's fields off the params (`codec.ts`).
 */
export async function rev2026ToolsCall(
  ctx: Rev2026Context,
  round: CallRound,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const { call, requestState, inputResponses: responses } = round;
  let resume: string | undefined;
  if (requestState !== undefined) {
    const owner = ctx.anonymous ? undefined : Keys.ownerId(ctx.owner);
    const state = requestStates(ctx).decode(requestState, owner, call.name);
    if (state.taskId === undefined) {
      throw ProtocolError.invalidParams('Invalid params: requestState belongs to another request');
    }
    resume = state.taskId;
  }
  const outcome = await toolsCall(ctx, {
    ...call,
    ...(resume !== undefined && { resume }),
    checkEnvelope: (inputSchema, args) => checkParamHeaders(inputSchema, args, ctx.params),
    signal,
  });
  if (outcome.kind === 'call') return awaitCall(ctx, call.name, outcome.task, signal, responses);
  return encode('tools/call', outcome);
}

/** Waits for a call to finish or to need input, and answers its result, its error or `input_required`. */
async function awaitCall(
  ctx: Rev2026Context,
  tool: string,
  record: StoredTask,
  signal: AbortSignal,
  responses: Record<string, unknown> | undefined,
): Promise<Record<string, unknown>> {
  // The answers this round brought go to the requests of the call that wait under their keys, also to those
  // it asks only now (a round may bring an answer before the question: input requests are keyed by the tool).
  const unused = new Map(Object.entries(responses ?? {}));
  const notices = noticesOf(ctx, record);
  let settled = await settle(ctx, record.taskId, signal, notices);
  while (settled !== 'aborted' && 'inputs' in settled) {
    const now = Object.keys(settled.inputs).filter((key) => unused.has(key));
    if (now.length === 0) break;
    await answerInputs(ctx.services, record, Object.fromEntries(now.map((key) => [key, unused.get(key)])));
    for (const key of now) unused.delete(key);
    // A task whose input arrived goes on as a task: this round answers CreateTaskResult, with the status the
    // task has once the tool took the answers (never the input_required the answers just ended).
    if (record.kind === 'task') return createTaskResult(await afterRound(ctx, record, signal));
    settled = await settle(ctx, record.taskId, signal, notices);
  }
  if (settled === 'aborted') {
    // A call nobody waits for any more is cancelled; a task runs on (its id is in the last round's state).
    if (record.kind === 'direct') {
      await ctx.services.tasks.cancelAsBroker(record, 'The client went away').catch(() => {});
      await removeWaitingJob(ctx.services, tool, record.taskId, ctx).catch(() => {});
    }
    throw ProtocolError.internal('The request was aborted');
  }
  if ('inputs' in settled) {
    const requestState = requestStates(ctx).encode({
      taskId: record.taskId,
      ownerId: record.ownerId,
      tool,
      expiresAt: Date.now() + REQUEST_STATE_TTL_MS,
    });
    return { resultType: 'input_required', inputRequests: settled.inputs, requestState };
  }
  if (settled.task.kind === 'task') return createTaskResult(settled.task);
  await notices.drain(record.taskId);
  const { outcome } = await ctx.services.tasks.readWithOutcome(record.taskId);
  if (outcome !== undefined && 'result' in outcome) return { ...outcome.result, resultType: 'complete' };
  if (outcome !== undefined) throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
  const why = settled.task.statusMessage === undefined ? '' : `: ${settled.task.statusMessage}`;
  throw ProtocolError.internal(`The call ${settled.task.status === 'cancelled' ? 'was cancelled' : 'ended'}${why}`);
}

/** What of the call's outbox this request gets: progress for its token, log messages at its `_meta` logLevel. */
function noticesOf(ctx: Rev2026Context, record: StoredTask): CallNotices {
  const token = record.progressToken as ProgressToken | undefined;
  const level = LoggingLevelSchema.safeParse(ctx.meta.logLevel);
  return new CallNotices(ctx.answer, ctx.services.outbox, token, level.success ? level.data : undefined);
}

type Settled = { readonly task: StoredTask } | { readonly task: StoredTask; readonly inputs: InputRequestsView };

/**
 * A tool may ask several things at once (a `Promise.all` of questions): its worker marks the requests of one
 * event-loop turn with their number, and a round goes out once all of them are posted, or after
 * `TOGETHER_WAIT_MS` if one never is. Requests that do not say (an earlier worker) go out once no new one
 * came for `QUIET_MS`: a quiet period after an arrival, not a poll.
 */
const QUIET_MS = 100;
const TOGETHER_WAIT_MS = 5000;

/**
 * Until the record is terminal, or waits for input it has asked for. Woken by the task follower (its status
 * changes and end, and "read again" after the subscriber reconnected) and by its outbox's arrivals (input
 * requests, progress, logs): no timer re-reads it.
 */
async function settle(
  ctx: Rev2026Context,
  taskId: string,
  signal: AbortSignal,
  notices: CallNotices,
): Promise<Settled | 'aborted'> {
  const wake = new RoundWake(ctx.services.follower, taskId, signal);
  try {
    await wake.start();
    let asked = 0;
    let since: number | undefined;
    for (;;) {
      if (signal.aborted) return 'aborted';
      await notices.drain(taskId);
      const task = await ctx.services.tasks.read(taskId);
      if (task === undefined) throw ProtocolError.internal('The call expired before it finished');
      if (isTerminalStatus(task.status)) return { task };
      let waitMs: number | undefined;
      if (task.status === 'input_required') {
        const { inputs, complete } = await pendingRound(ctx.services, taskId);
        const count = Object.keys(inputs).length;
        if (count > 0) {
          since ??= Date.now();
          const left = TOGETHER_WAIT_MS - (Date.now() - since);
          if (complete === true || (complete === undefined && count === asked) || left <= 0) return { task, inputs };
          waitMs = complete === false ? left : QUIET_MS;
        }
        asked = count;
      }
      await wake.next(waitMs);
    }
  } finally {
    await wake.stop();
  }
}

/** How long a round that supplied input waits for the tool to take it before it reports the task as it is. */
const TAKE_INPUT_WAIT_MS = 10_000;

/**
 * The task once its tool took the answers of this round: no longer `input_required`, or `input_required` again
 * with a new request (the answered ones are no longer pending). Woken by the task follower and the outbox's
 * arrivals; the deadline is one timer.
 */
async function afterRound(ctx: Rev2026Context, record: StoredTask, signal: AbortSignal): Promise<StoredTask> {
  const { taskId } = record;
  const wake = new RoundWake(ctx.services.follower, taskId, signal);
  const deadline = Date.now() + TAKE_INPUT_WAIT_MS;
  try {
    await wake.start();
    for (;;) {
      const task = (await ctx.services.tasks.read(taskId)) ?? record;
      if (task.status !== 'input_required' || signal.aborted || Date.now() >= deadline) return task;
      if (Object.keys(await pendingInputs(ctx.services, taskId)).length > 0) return task;
      await wake.next(deadline - Date.now());
    }
  } finally {
    await wake.stop();
  }
}
