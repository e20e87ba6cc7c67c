import type { CatalogEntry } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError } from '@taskgate/protocol';
import type { Reply, RpcContext } from './context.js';
import { enqueue } from './enqueue.js';
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
