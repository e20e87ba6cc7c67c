import {
  type CallToolResult,
  CallToolResultSchema,
  CreateTaskResultSchema,
  ErrorCode,
  McpError,
  type Tool as UpstreamTool,
} from '@modelcontextprotocol/sdk/types.js';
import { errorMessage, inSpan, SpanKind, type UpstreamCalls } from '@taskgate/core';
import { ProtocolError, type CallToolResult as TaskResult } from '@taskgate/protocol';
import { TaskAbortedError, type ToolContext } from '@taskgate/worker';
import { type RoutedCall, routedCall } from './call-routes.js';
import { callRev20260728 } from './rev2026-07-28-call.js';
import { callWithTasks } from './rev2026-07-28-tasks.js';
import type { UpstreamServerConfig } from './server-config.js';
import type { UpstreamCallEnd, UpstreamMetrics } from './upstream-metrics.js';
import { type Lease, type UpstreamPool, UpstreamUnavailableError } from './upstream-pool.js';
import { REV_2026_07_28 } from './upstream-session.js';

/** How long a call waits for a server that is (re)starting before it fails (ms). */
const UNAVAILABLE_WAIT_MS = 5000;
/** How long the upstream task of a taskgate task is remembered beyond the call's own limit (ms). */
const RECORD_SLACK_MS = 3_600_000;

export interface CallDeps {
  readonly server: UpstreamServerConfig;
  readonly pool: UpstreamPool;
  readonly calls: UpstreamCalls;
  readonly metrics: UpstreamMetrics;
}

/** A call that ended without a result from the upstream, as a tool error the client reads. */
class CallFailure extends Error {
  constructor(
    readonly outcome: UpstreamCallEnd,
    message: string,
  ) {
    super(message);
  }
}

/** The upstream's JSON-RPC error as it sent it (the SDK prefixes its message with "MCP error <code>: "). */
function upstreamError(error: McpError): ProtocolError {
  const message = error.message.replace(/^MCP error -?\d+: /, '');
  return new ProtocolError(error.code, message, error.data);
}

/** Whether the session carrying the call ended under it (process exit, connection closed). */
function sessionLost(error: unknown): boolean {
  return error instanceof McpError && error.code === ErrorCode.ConnectionClosed;
}

function failureOf(server: string, error: unknown): CallFailure | ProtocolError {
  if (error instanceof CallFailure) return error;
  if (sessionLost(error)) {
    return new CallFailure(
      'failed',
      `The upstream MCP server '${server}' stopped during the call (its process exited or its connection closed); ` +
        'the call did not complete',
    );
  }
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return new CallFailure('failed', `The upstream MCP server '${server}' did not answer in time`);
  }
  if (error instanceof McpError) return upstreamError(error);
  if (error instanceof UpstreamUnavailableError) return new CallFailure('unavailable', error.message);
  return new CallFailure('failed', `The call to the upstream MCP server '${server}' failed (${errorMessage(error)})`);
}

/**
 * One execution of an upstream tool: calls the upstream's `tools/call` (as a task when it runs the tool as
 * one) with a progress token, relays progress, log messages and the upstream's requests for input to the
 * task, and returns the upstream's result unchanged. Cancelling the task cancels the upstream call.
 */
export async function callUpstream(
  deps: CallDeps,
  tool: UpstreamTool,
  asTask: boolean,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<TaskResult> {
  const { server, metrics } = deps;
  const started = process.hrtime.bigint();
  const attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': tool.name,
    'taskgate.upstream.server': server.name,
    'taskgate.upstream.task': asTask,
  };
  let outcome: UpstreamCallEnd = 'ok';
  try {
    return await inSpan(`tools/call ${tool.name}`, { kind: SpanKind.CLIENT, attributes }, async () => {
      const result = asTask ? await followTask(deps, tool, args, ctx) : await callOnce(deps, tool, args, ctx);
      if (result.isError === true) outcome = 'tool_error';
      // The SDK's parse keeps every field the upstream sent: the task's result is the upstream's, unchanged.
      return result as TaskResult;
    });
  } catch (error) {
    if (ctx.signal.aborted) {
      outcome = 'cancelled';
      throw ctx.signal.reason;
    }
    const failure = failureOf(server.name, error);
    if (failure instanceof ProtocolError) {
      outcome = 'protocol_error';
      throw failure;
    }
    outcome = failure.outcome;
    ctx.logger.warn({ server: server.name, outcome }, failure.message);
    return { content: [{ type: 'text', text: failure.message }], isError: true } satisfies TaskResult;
  } finally {
    metrics.calls.inc({ server: server.name, outcome });
    metrics.duration.observe({ server: server.name }, Number(process.hrtime.bigint() - started) / 1e9);
  }
}

function requestOptions(deps: CallDeps, ctx: ToolContext) {
  return { signal: ctx.signal, timeout: deps.server.timeoutMs };
}

/** The `tools/call` params of `tool`, with the call's progress token (its connection routes the progress). */
function callParams(tool: UpstreamTool, args: Record<string, unknown>, call: RoutedCall) {
  return { name: tool.name, arguments: args, _meta: { progressToken: call.progressToken } };
}

/**
 * A plain `tools/call` on the session's revision (2026-07-28: with its rounds of input): the SDK sends
 * `notifications/cancelled` when the task's signal aborts.
 */
async function callOnce(
  deps: CallDeps,
  tool: UpstreamTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const lease = await deps.pool.acquire(UNAVAILABLE_WAIT_MS);
  const { session } = lease;
  const call = routedCall(ctx);
  const off = session.routes.add(call);
  try {
    if (session.revision === REV_2026_07_28) {
      const { tasks } = session;
      if (tasks !== undefined)
        return await callWithTasks({ ...deps, raw: tasks, listens: session.listens }, tool, args, call);
      return (await callRev20260728(session, deps.server, tool, args, call)) as CallToolResult;
    }
    return await session.sdkV1.request(
      { method: 'tools/call', params: callParams(tool, args, call) },
      CallToolResultSchema,
      requestOptions(deps, ctx),
    );
  } finally {
    off();
    await lease.release();
  }
}

/**
 * A call the upstream runs as a task: creates it and stores its id with the taskgate task before waiting, or,
 * in an execution after a bridge crash, follows the stored one (tasks/result) without calling the tool again.
 */
async function followTask(
  deps: CallDeps,
  tool: UpstreamTool,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const { server } = deps;
  const stored = await deps.calls.read(ctx.taskId);
  const resumed = stored !== undefined && stored.server === server.name;
  if (resumed && server.stdio !== undefined) {
    throw new CallFailure(
      'failed',
      `The upstream task of this call was lost: the bridge stopped during it and the upstream MCP server ` +
        `'${server.name}' runs its tasks in the bridge's own process`,
    );
  }
  const lease: Lease = await deps.pool.acquire(UNAVAILABLE_WAIT_MS, resumed ? stored.sessionId : undefined);
  const session = lease.session;
  if (session.revision === REV_2026_07_28) {
    // Tools published from the last listing before the server was reached; it now speaks 2026-07-28.
    await lease.release();
    return await callOnce(deps, tool, args, ctx);
  }
  const call = routedCall(ctx);
  const off = session.routes.add(call);
  let keep = false;
  try {
    if (resumed) {
      call.upstreamTaskId = stored.upstreamTaskId;
      ctx.logger.info({ server: server.name }, 'following the upstream task after a restart');
    } else {
      const created = await session.sdkV1.request(
        { method: 'tools/call', params: { ...callParams(tool, args, call), task: { ttl: server.timeoutMs } } },
        CreateTaskResultSchema,
        requestOptions(deps, ctx),
      );
      call.upstreamTaskId = created.task.taskId;
      const record = { server: server.name, upstreamTaskId: created.task.taskId };
      const sessionId = session.sessionId;
      await deps.calls.record(
        ctx.taskId,
        sessionId === undefined ? record : { ...record, sessionId },
        server.timeoutMs + RECORD_SLACK_MS,
      );
    }
    const taskId = call.upstreamTaskId;
    const onAbort = (): void => {
      const kind = ctx.signal.reason instanceof TaskAbortedError ? ctx.signal.reason.kind : undefined;
      // A bridge that shuts down leaves the upstream task running for the bridge that takes the job over.
      if (kind === 'shutdown' || kind === 'lock-lost') {
        keep = true;
        return;
      }
      session.sdkV1.experimental.tasks.cancelTask(taskId).catch(() => {});
    };
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    try {
      const result = await session.sdkV1.experimental.tasks.getTaskResult(taskId, CallToolResultSchema, {
        signal: ctx.signal,
        timeout: server.timeoutMs,
      });
      await deps.calls.clear(ctx.taskId).catch(() => {});
      return result;
    } finally {
      ctx.signal.removeEventListener('abort', onAbort);
    }
  } catch (error) {
    if (error instanceof McpError && error.code === ErrorCode.InvalidParams && resumed) {
      throw new CallFailure(
        'failed',
        `The upstream MCP server '${server.name}' no longer knows the task this call was following ` +
          `(${upstreamError(error).message})`,
      );
    }
    throw error;
  } finally {
    off();
    await lease.release(keep);
  }
}
