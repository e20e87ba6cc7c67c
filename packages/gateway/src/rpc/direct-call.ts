import type { CatalogEntry, TaskRef } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError, type RequestId, toJsonRpcError } from '@taskgate/protocol';
import type { Logger } from '../logger.js';
import { outboxMessage } from '../tasks/outbox-messages.js';
import { errorMessage, type GatewayServices, type Reply, type RpcContext, resultMessage } from './context.js';
import { enqueue } from './enqueue.js';
import { removeWaitingJob } from './tasks-methods.js';

/**
 * A plain (non-task) `tools/call` of an optional or forbidden tool, run through the task pipeline as a hidden
 * record (kind `direct`: not listed, not visible to the tasks methods). The POST answers as an SSE stream that
 * carries the call's progress, log messages and server-to-client requests, then the tool's result.
 * The record is indexed by the request's JSON-RPC id so that `notifications/cancelled` on any gateway finds it.
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
  const callKey = services.keys.clientCall(session.sessionId, request.id);
  await services.redis.set(callKey, record.taskId, 'PX', record.ttl);
  if ((await enqueue(ctx, entry, record, args)) !== undefined) {
    await services.redis.del(callKey);
    throw ProtocolError.internal('The call could not be queued for a worker; try again later.');
  }
  const ref: TaskRef = { taskId: record.taskId, ownerId: record.ownerId };
  const logger = ctx.logger.child({ taskId: record.taskId, tool: entry.tool.name });
  logger.debug({}, 'direct call started');
  return {
    kind: 'stream',
    role: 'direct',
    run: async (stream) => {
      const rendering = {
        ...(progressToken !== undefined && { progressToken }),
        ...(session.logLevel !== undefined && { logLevel: session.logLevel }),
      };
      const relay = await services.relay.start(record.taskId, (item) => {
        const message = outboxMessage(item, rendering);
        if (message !== undefined) stream.send(message);
      });
      try {
        const waited = await services.watcher.untilTerminal(record.taskId, {
          signal: stream.signal,
          pollMs: services.pollMs,
        });
        if (waited.kind === 'aborted') {
          if (!stream.endedByServer) cancelLater(services, ref, entry.tool.name, logger);
          return;
        }
        await relay.drain();
        // Cancelled through notifications/cancelled: the request gets no response.
        if (waited.kind === 'terminal' && waited.task.status === 'cancelled') return;
        stream.send(await finalMessage(ctx, request.id, record.taskId, waited.kind === 'gone'));
      } finally {
        await relay.stop();
        await services.redis.del(callKey).catch(() => {});
      }
    },
  };
}

async function finalMessage(
  ctx: RpcContext,
  id: RequestId,
  taskId: string,
  gone: boolean,
): Promise<Record<string, unknown>> {
  try {
    if (gone) throw ProtocolError.internal('The call expired before it finished');
    const { outcome } = await ctx.services.tasks.outcome(ctx.owner, taskId);
    if (outcome !== undefined && 'result' in outcome) return resultMessage(id, outcome.result);
    if (outcome !== undefined) return errorMessage(id, outcome.error);
    throw ProtocolError.internal('The call ended without a result');
  } catch (error) {
    return errorMessage(id, toJsonRpcError(error));
  }
}

/**
 * The client closed a direct call's stream: cancel the call after the grace period, unless it finished by then.
 * (Once streams are resumable, a resumption within the grace period will keep the call alive.)
 */
function cancelLater(services: GatewayServices, ref: TaskRef, tool: string, logger: Logger): void {
  const timer = setTimeout(() => {
    void cancelCall(services, ref, tool, 'The client closed the stream of this call', logger);
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
