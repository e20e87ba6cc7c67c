import type { CallToolResult, Tool as UpstreamTool } from '@modelcontextprotocol/sdk/types.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, type UpstreamCalls } from '@taskgate/core';
import { TaskAbortedError } from '@taskgate/worker';
import type { RoutedCall } from './call-routes.js';
import { answer, type InputRequest } from './rev2026-07-28-call.js';
import type { RawRequests } from './rev2026-07-28-raw.js';
import { TaskWatch } from './rev2026-07-28-watch.js';
import type { UpstreamServerConfig } from './server-config.js';

/** Rounds of input one call may ask for before the bridge gives up on it. */
const MAX_INPUT_ROUNDS = 50;
/** How often a task is polled when the upstream names no interval (ms). */
const POLL_MS = 500;
/** How long a cancelled call waits for the upstream's answer to `tasks/cancel` before its session may close (ms). */
const CANCEL_WAIT_MS = 5_000;
/** How long a listened task may say nothing before it is read with `tasks/get` all the same (ms). */
const CHECK_MS = 30_000;
/** How long the upstream task of a taskgate task is remembered beyond the call's own limit (ms). */
const RECORD_SLACK_MS = 3_600_000;

type Json = Record<string, unknown>;

export interface TaskCallDeps {
  readonly server: UpstreamServerConfig;
  readonly calls: UpstreamCalls;
  readonly raw: RawRequests;
  /** Whether the server serves `subscriptions/listen` (its `server/discover` says so). */
  readonly listens: boolean;
}

const sleep = (ms: number, signal: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      'abort',
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

const delay = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/** A result as the task's: without the 2026-07-28 `resultType` discriminator. */
function complete(result: Json): CallToolResult {
  const { resultType: _type, ...rest } = result;
  return rest as CallToolResult;
}

/** The answers to the requests not answered yet, each asked of taskgate's client through the call. */
async function answers(call: RoutedCall, requests: Json, answered: Set<string>): Promise<Json> {
  const fresh = Object.entries(requests as Record<string, InputRequest>).filter(([key]) => !answered.has(key));
  for (const [key] of fresh) answered.add(key);
  return Object.fromEntries(
    await Promise.all(fresh.map(async ([key, request]) => [key, await answer(call, key, request)])),
  );
}

/** The states after which an upstream task changes no more. */
const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** A listen stream of the task, when the server serves one and honours the task; else the task is polled. */
async function watchOf(deps: TaskCallDeps, call: RoutedCall, taskId: string): Promise<TaskWatch | undefined> {
  if (!deps.listens) return undefined;
  const watch = await TaskWatch.open(deps.raw, taskId, call.ctx.signal).catch((error: unknown) => {
    call.ctx.logger.debug({ server: deps.server.name, err: errorMessage(error) }, 'upstream task not listened to');
    return undefined;
  });
  if (watch === undefined) call.ctx.logger.debug({ server: deps.server.name }, 'upstream task polled');
  return watch;
}

/**
 * Follows an upstream task (tasks extension) to its end: through its `notifications/tasks` on a
 * `subscriptions/listen` stream where the server offers one (with a `tasks/get` first, when the stream says
 * nothing for a while, and once it ended), else by polling `tasks/get`. Its `statusMessage` becomes the taskgate
 * task's; its `inputRequests` are asked of taskgate's client and answered with `tasks/update`; cancelling the
 * taskgate task sends `tasks/cancel`, except when the bridge stops (the bridge that takes the job over follows
 * the same task).
 */
async function follow(deps: TaskCallDeps, call: RoutedCall, taskId: string): Promise<CallToolResult> {
  const { ctx } = call;
  const answered = new Set<string>();
  let cancelling: Promise<unknown> | undefined;
  const onAbort = (): void => {
    const kind = ctx.signal.reason instanceof TaskAbortedError ? ctx.signal.reason.kind : undefined;
    if (kind === 'shutdown' || kind === 'lock-lost') return;
    cancelling = deps.raw.request('tasks/cancel', { taskId }).catch(() => {});
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  const watch = await watchOf(deps, call, taskId);
  let shown: string | undefined;
  let fetch = true;
  try {
    for (;;) {
      const listened = fetch || watch === undefined || watch.ended ? undefined : await watch.next(CHECK_MS, ctx.signal);
      // A finished state without its outcome (a stream may leave it out) is read with tasks/get.
      const outcome = listened !== undefined && ('result' in listened || 'error' in listened);
      const whole = listened !== undefined && (outcome || !['completed', 'failed'].includes(String(listened.status)));
      const task = whole ? listened : await deps.raw.request('tasks/get', { taskId }, ctx.signal);
      fetch = false;
      if (
        typeof task.statusMessage === 'string' &&
        task.statusMessage !== shown &&
        !TERMINAL.has(String(task.status))
      ) {
        shown = task.statusMessage;
        await ctx.setStatusMessage(shown);
      }
      switch (task.status) {
        case 'completed':
          return complete((task.result ?? {}) as Json);
        case 'failed': {
          if (task.result !== undefined) return complete(task.result as Json);
          const error = task.error as { code?: number; message?: string; data?: unknown } | undefined;
          throw new McpError(
            error?.code ?? ErrorCode.InternalError,
            error?.message ?? String(task.statusMessage ?? 'failed'),
            error?.data,
          );
        }
        case 'cancelled':
          throw new Error(`the upstream task ${taskId} was cancelled`);
        case 'input_required': {
          const inputResponses = await answers(call, (task.inputRequests ?? {}) as Json, answered);
          if (Object.keys(inputResponses).length > 0) {
            await deps.raw.request('tasks/update', { taskId, inputResponses }, ctx.signal);
            continue;
          }
          break;
        }
      }
      if (watch === undefined || watch.ended) {
        await sleep(typeof task.pollIntervalMs === 'number' ? task.pollIntervalMs : POLL_MS, ctx.signal);
      }
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    await watch?.close().catch(() => {});
    // The session may close once the call returns: the upstream hears the cancel first (or it gives up).
    if (cancelling !== undefined) await Promise.race([cancelling, delay(CANCEL_WAIT_MS)]);
  }
}

/**
 * A 2026-07-28 `tools/call` to a server of the tasks extension, opted in: the server answers with its result,
 * `input_required` (answered by calling again, as without tasks) or a task, whose id is stored with the
 * taskgate task before it is followed. Before the call a blank record is stored, so an execution after a
 * bridge crash either follows the same upstream task or, if the upstream ran the call without one, fails
 * instead of running the tool twice.
 */
export async function callWithTasks(
  deps: TaskCallDeps,
  tool: UpstreamTool,
  args: Record<string, unknown>,
  call: RoutedCall,
): Promise<CallToolResult> {
  const { ctx } = call;
  const { server, calls } = deps;
  const keep = server.timeoutMs + RECORD_SLACK_MS;
  const stored = await calls.read(ctx.taskId);
  if (stored !== undefined && stored.server === server.name) {
    if (stored.upstreamTaskId === '' || server.stdio !== undefined) {
      throw new Error(
        stored.upstreamTaskId === ''
          ? 'the bridge stopped during the call, which the upstream ran without a task; it did not complete'
          : "the upstream task of this call was lost: the bridge stopped during it and the server runs in the bridge's process",
      );
    }
    ctx.logger.info({ server: server.name }, 'following the upstream task after a restart');
    const result = await follow(deps, call, stored.upstreamTaskId);
    await calls.clear(ctx.taskId).catch(() => {});
    return result;
  }
  await calls.record(ctx.taskId, { server: server.name, upstreamTaskId: '' }, keep);
  const base = { name: tool.name, arguments: args, _meta: { progressToken: call.progressToken } };
  let params: Json = base;
  for (let round = 0; round <= MAX_INPUT_ROUNDS; round += 1) {
    const result = await deps.raw.request('tools/call', params, ctx.signal);
    if (result.resultType === 'task') {
      const taskId = String(result.taskId);
      call.upstreamTaskId = taskId;
      await calls.record(ctx.taskId, { server: server.name, upstreamTaskId: taskId }, keep);
      const outcome = await follow(deps, call, taskId);
      await calls.clear(ctx.taskId).catch(() => {});
      return outcome;
    }
    if (result.resultType !== 'input_required') {
      await calls.clear(ctx.taskId).catch(() => {});
      return complete(result);
    }
    const inputResponses = await answers(call, (result.inputRequests ?? {}) as Json, new Set());
    params = {
      ...base,
      ...(Object.keys(inputResponses).length > 0 && { inputResponses }),
      ...(result.requestState !== undefined && { requestState: result.requestState }),
    };
  }
  throw new Error(`the upstream asked for input more than ${MAX_INPUT_ROUNDS} times in one call`);
}
