import { type CatalogEntry, Keys, type StoredTask } from '@taskgate/core';
import {
  ErrorCode,
  isTerminalStatus,
  LoggingLevelSchema,
  type ProgressToken,
  ProtocolError,
  TASKS_EXTENSION,
} from '@taskgate/protocol';
import { enqueue } from '../../methods/enqueue.js';
import { removeWaitingJob } from '../../tasks/cancel-call.js';
import {
  answerInputs,
  declaresTasks,
  inputResponsesOf,
  pendingInputs,
  requestStates,
  type StatelessContext,
} from './context.js';
import { CallNotices } from './notices.js';
import { checkParamHeaders } from './param-headers.js';
import { createTaskResult, type InputRequestsView } from './task-view.js';

/** How long a `requestState` stays valid: the input a round asks for must come back within it. */
const REQUEST_STATE_TTL_MS = 10 * 60_000;

/** -32021: the call needs the tasks extension, which the request's `_meta` does not declare. */
function tasksRequired(tool: string): ProtocolError {
  return new ProtocolError(
    ErrorCode.MissingClientCapability,
    `Missing required client capability: tool '${tool}' runs only as a task; declare the ${TASKS_EXTENSION} extension`,
    { requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } } },
  );
}

/**
 * `tools/call` on revision 2026-07-28. The server decides task-ness per tool: a tool whose 2025 `taskSupport`
 * is `required` or `optional` becomes a task (flat `CreateTaskResult`, written before it is returned) when the
 * request declares the tasks extension; `required` without it is -32021; everything else runs as a call whose
 * answer waits here. A call that needs input answers `input_required` with the pending requests and a signed
 * `requestState`; the next round brings `inputResponses` and the state, and the same call goes on. A legacy
 * `task` param is tolerated and changes nothing.
 */
export async function statelessToolsCall(
  ctx: StatelessContext,
  params: Record<string, unknown>,
  signal: AbortSignal,
): Promise<Record<string, unknown>> {
  const name = params.name;
  if (typeof name !== 'string') throw ProtocolError.invalidParams('Invalid params: params.name must be a string');
  const entry = await ctx.services.catalog.get(name);
  if (entry === undefined) {
    throw ProtocolError.invalidParams(`Unknown tool: '${name}'. Call tools/list to see the available tools.`);
  }
  const responses = inputResponsesOf(params);
  if (params.requestState !== undefined) {
    const state = requestStates(ctx).decode(
      params.requestState,
      ctx.anonymous ? undefined : Keys.ownerId(ctx.owner),
      name,
    );
    if (state.taskId === undefined)
      throw ProtocolError.invalidParams('Invalid params: requestState belongs to another request');
    const task = await ctx.services.tasks.read(state.taskId);
    if (task === undefined) {
      throw ProtocolError.invalidParams('Invalid params: the request this state belongs to has expired');
    }
    return awaitCall(ctx, entry, task, signal, responses);
  }
  const args = (params.arguments ?? {}) as Record<string, unknown>;
  if (typeof args !== 'object' || args === null || Array.isArray(args)) {
    throw ProtocolError.invalidParams('Invalid params: params.arguments must be an object');
  }
  checkParamHeaders(entry.tool.inputSchema as Record<string, unknown>, args, ctx.params);
  const taskSupport = entry.tool.execution?.taskSupport ?? 'forbidden';
  const asTask = taskSupport !== 'forbidden' && declaresTasks(ctx);
  if (taskSupport === 'required' && !asTask) throw tasksRequired(name);
  const check = ctx.services.validator.check(entry.tool, args);
  if (!check.ok) {
    if (asTask) throw ProtocolError.invalidParams(check.message);
    return { resultType: 'complete', content: [{ type: 'text', text: check.message }], isError: true };
  }
  const progressToken = (params._meta as { progressToken?: string | number } | undefined)?.progressToken;
  const record = await ctx.services.tasks.create({
    owner: ctx.owner,
    kind: asTask ? 'task' : 'direct',
    tool: name,
    wire: '2026-07-28',
    ...(asTask ? {} : { requestedTtlMs: ctx.services.options.directCallTtlMs }),
    ...(progressToken !== undefined && { progressToken }),
  });
  ctx.logger.info(
    { audit: asTask ? 'task.created' : 'call.started', taskId: record.taskId, tool: name, owner: record.ownerId },
    asTask ? 'task created' : 'call started',
  );
  const failed = await enqueue(ctx, entry, record, args);
  // A task is handed back at once, unless its tool gathers its first input before it becomes one.
  if (asTask && (failed !== undefined || entry.inputBeforeTask !== true)) return createTaskResult(failed ?? record);
  if (failed !== undefined) throw ProtocolError.internal('The call could not be queued for a worker; try again later.');
  return awaitCall(ctx, entry, record, signal, responses);
}

/** Waits for a call to finish or to need input, and answers its result, its error or `input_required`. */
async function awaitCall(
  ctx: StatelessContext,
  entry: CatalogEntry,
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
    await answerInputs(ctx, record, Object.fromEntries(now.map((key) => [key, unused.get(key)])));
    for (const key of now) unused.delete(key);
    // A task whose input arrived goes on as a task: this round answers CreateTaskResult.
    if (record.kind === 'task') return createTaskResult((await ctx.services.tasks.read(record.taskId)) ?? record);
    settled = await settle(ctx, record.taskId, signal, notices);
  }
  if (settled === 'aborted') {
    // A call nobody waits for any more is cancelled; a task runs on (its id is in the last round's state).
    if (record.kind === 'direct') {
      await ctx.services.tasks.cancelAsBroker(record, 'The client went away').catch(() => {});
      await removeWaitingJob(ctx.services, entry.tool.name, record.taskId, ctx).catch(() => {});
    }
    throw ProtocolError.internal('The request was aborted');
  }
  if ('inputs' in settled) {
    const requestState = requestStates(ctx).encode({
      taskId: record.taskId,
      ownerId: record.ownerId,
      tool: entry.tool.name,
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
function noticesOf(ctx: StatelessContext, record: StoredTask): CallNotices {
  const token = record.progressToken as ProgressToken | undefined;
  const level = LoggingLevelSchema.safeParse(ctx.meta.logLevel);
  return new CallNotices(ctx.answer, token, level.success ? level.data : undefined);
}

type Settled = { readonly task: StoredTask } | { readonly task: StoredTask; readonly inputs: InputRequestsView };

/** Until the record is terminal, or waits for input it has asked for; woken by its channel, re-read on a timer. */
async function settle(
  ctx: StatelessContext,
  taskId: string,
  signal: AbortSignal,
  notices: CallNotices,
): Promise<Settled | 'aborted'> {
  let wake: () => void = () => {};
  const unsubscribes = await Promise.all([
    ctx.services.bus.onTaskChange(taskId, () => wake()),
    ...(notices.wanted ? [ctx.services.bus.onOutboxArrival(taskId, () => wake())] : []),
  ]);
  let asked = 0;
  try {
    for (;;) {
      if (signal.aborted) return 'aborted';
      await notices.drain(taskId);
      const task = await ctx.services.tasks.read(taskId);
      if (task === undefined) throw ProtocolError.internal('The call expired before it finished');
      if (isTerminalStatus(task.status)) return { task };
      if (task.status === 'input_required') {
        // A tool may ask several things at once: the round goes out once no new request came for a moment.
        const inputs = await pendingInputs(ctx, taskId);
        const count = Object.keys(inputs).length;
        if (count > 0 && count === asked) return { task, inputs };
        asked = count;
      }
      await new Promise<void>((resolve) => {
        const timer = setTimeout(done, task.status === 'input_required' ? (asked > 0 ? 30 : 100) : 1000);
        function done(): void {
          clearTimeout(timer);
          signal.removeEventListener('abort', done);
          resolve();
        }
        wake = done;
        signal.addEventListener('abort', done, { once: true });
      });
    }
  } finally {
    await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe().catch(() => {})));
  }
}
