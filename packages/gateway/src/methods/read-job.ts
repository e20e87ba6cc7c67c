import {
  isRedisUnavailable,
  type ReadJobData,
  type ReadRequest,
  type TaskFollower,
  type TaskRef,
  type TaskStore,
  type ToolQueues,
} from '@taskgate/core';
import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import type { Call } from './context.js';

/** What a read on a worker uses. */
export interface ReadServices {
  readonly tasks: TaskStore;
  readonly queues: ToolQueues;
  readonly follower: TaskFollower;
  readonly options: { readonly readTimeoutMs: number };
}

/**
 * Runs a read (`resources/read`, `prompts/get`, `completion/complete`) on a worker through the task pipeline
 * and returns its result: a hidden record (kind `direct`, counted against the owner's active limit while it
 * runs), a BullMQ job on the offering's read queue, and a wait for the record to turn terminal through the
 * process's task follower. A JSON-RPC error the worker stored is thrown as is. When no worker answers within
 * `readTimeoutMs` the read is cancelled (its job removed if it has not started) and -32603 says so.
 */
export async function runReadJob(
  ctx: Call<ReadServices>,
  queue: string,
  read: ReadRequest,
): Promise<Record<string, unknown>> {
  const { services } = ctx;
  const timeoutMs = services.options.readTimeoutMs;
  const record = await services.tasks.create({ owner: ctx.owner, kind: 'direct', requestedTtlMs: timeoutMs * 2 });
  const ref: TaskRef = { taskId: record.taskId, ownerId: record.ownerId };
  const data: ReadJobData = {
    taskId: record.taskId,
    ownerId: record.ownerId,
    session: record.session ?? null,
    read,
    ...(ctx.principal !== undefined && { principal: ctx.principal }),
    ...(ctx.readInput !== undefined && { input: { answers: ctx.readInput.answers } }),
    client: {
      capabilities: ctx.session.clientCapabilities,
      ...(ctx.session.clientInfo !== undefined && { info: ctx.session.clientInfo }),
    },
  };
  try {
    await services.queues.enqueue({ queue, attempts: 1 }, data);
  } catch (error) {
    // Redis did not take the job, or its replicas did not confirm it: 503 with Retry-After (the record goes;
    // a read's job was never visible).
    if (isRedisUnavailable(error)) {
      await services.tasks.discard(ref).catch(() => {});
      throw error;
    }
    ctx.logger.error({ taskId: record.taskId, queue, err: (error as Error).message }, 'enqueuing a read failed');
    await services.tasks.cancelAsBroker(ref, 'The read could not be queued').catch(() => {});
    throw ProtocolError.internal(`${read.method} could not be queued for a worker; try again later.`);
  }
  const waited = await services.follower.untilTerminal(record.taskId, { signal: AbortSignal.timeout(timeoutMs) });
  if (waited.kind !== 'terminal') {
    await services.tasks.cancelAsBroker(ref, 'No worker answered in time').catch(() => {});
    await services.queues.removeWaiting(queue, record.taskId).catch(() => false);
    ctx.logger.warn({ taskId: record.taskId, queue, method: read.method }, 'read timed out');
    throw ProtocolError.internal(`No worker answered ${read.method} within ${timeoutMs} ms; try again later.`);
  }
  const { outcome } = await services.tasks.outcome(ctx.owner, record.taskId);
  if (outcome !== undefined && 'result' in outcome) return outcome.result;
  if (outcome !== undefined) throw new ProtocolError(outcome.error.code, outcome.error.message, outcome.error.data);
  throw new ProtocolError(ErrorCode.InternalError, `${read.method} ended without a result`);
}
