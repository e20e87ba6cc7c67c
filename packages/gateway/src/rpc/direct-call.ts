import type { CatalogEntry, Logger, StoredTask, TaskRecord, TaskRef } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError, type RequestId, toJsonRpcError } from '@taskgate/protocol';
import {
  errorResponse,
  type GatewayServices,
  type Reply,
  type RpcContext,
  resultMessage,
  type SessionContext,
} from './context.js';
import { enqueue } from './enqueue.js';
import { removeWaitingJob } from './tasks-methods.js';
import { streamReply } from './tasks-result.js';

/**
 * A plain (non-task) `tools/call` of an optional or forbidden tool, run through the task pipeline as a hidden
 * record (kind `direct`: not listed, not visible to the tasks methods). The POST answers as a resumable SSE
 * stream that carries the call's progress, log messages and server-to-client requests, from whichever worker
 * runs it, then the tool's result (see `runTaskStream`). The record is indexed by the request's JSON-RPC id so
 * that `notifications/cancelled` on any gateway finds it.
 */
export async function directCall(
  ctx: RpcContext,
  entry: CatalogEntry,
  params: ClientRequestParams<'tools/call'>,
  args: Record<string, unknown>,
): Promise<Reply> {
  const { services, request, session } = ctx;
  const progressToken = params._meta?.progressToken;
  const record = await services.tasks.create({
    owner: ctx.owner,
    kind: 'direct',
    tool: entry.tool.name,
    requestedTtlMs: services.options.directCallTtlMs,
    ...(progressToken !== undefined && { progressToken }),
  });
  await services.calls.open(session.sessionId, request.id, record.taskId, record.ttl);
  if ((await enqueue(ctx, entry, record, args)) !== undefined) {
    await services.calls.close(session.sessionId, request.id);
    throw ProtocolError.internal('The call could not be queued for a worker; try again later.');
  }
  ctx.logger.debug({ taskId: record.taskId, tool: entry.tool.name }, 'direct call started');
  return streamReply('direct', record);
}

/** The response of a finished direct call: its result, its JSON-RPC error, or why it has neither. */
export async function directCallOutcome(
  ctx: SessionContext,
  id: RequestId,
  taskId: string,
  task: TaskRecord | undefined,
): Promise<Record<string, unknown>> {
  try {
    if (task === undefined) throw ProtocolError.internal('The call expired before it finished');
    const { outcome } = await ctx.services.tasks.outcome(ctx.owner, taskId);
    if (outcome !== undefined && 'result' in outcome) return resultMessage(id, outcome.result);
    if (outcome !== undefined) return errorResponse(id, outcome.error);
    const why = task.statusMessage === undefined ? '' : `: ${task.statusMessage}`;
    throw ProtocolError.internal(
      task.status === 'cancelled' ? `The call was cancelled${why}` : `The call ended without a result${why}`,
    );
  } catch (error) {
    return errorResponse(id, toJsonRpcError(error));
  }
}

/**
 * The client's connection to a direct call's stream ended without the response: cancel the call after the
 * grace period unless, by then, the stream was resumed on some pod (a connection holds it again) or is done.
 */
export function cancelUnlessResumed(
  services: GatewayServices,
  task: StoredTask,
  streamId: string,
  logger: Logger,
): void {
  const timer = setTimeout(() => {
    void (async () => {
      if (await services.events.connected(streamId)) return;
      if ((await services.events.state(streamId))?.done === true) return;
      const ref = { taskId: task.taskId, ownerId: task.ownerId };
      const reason = `The client closed the stream of this call and did not resume it within ${services.options.directCallCancelGraceMs} ms`;
      await cancelCall(services, ref, task.tool, reason, logger);
    })().catch((error: unknown) =>
      logger.warn(
        { taskId: task.taskId, err: error instanceof Error ? error.message : String(error) },
        'cancel failed',
      ),
    );
  }, services.options.directCallCancelGraceMs);
  timer.unref();
}

/** Cancels a direct call on the broker's behalf and removes its job if it has not started. */
export async function cancelCall(
  services: GatewayServices,
  ref: TaskRef,
  tool: string | undefined,
  reason: string,
  logger: Logger,
): Promise<void> {
  try {
    const result = await services.tasks.cancelAsBroker(ref, reason);
    if (!result.ok) return;
    logger.info({ audit: 'call.cancelled', taskId: ref.taskId, tool, reason }, 'direct call cancelled');
    await removeWaitingJob(services, tool, ref.taskId);
  } catch (error) {
    logger.warn({ taskId: ref.taskId, err: error instanceof Error ? error.message : String(error) }, 'cancel failed');
  }
}
