import { type DirectCalls, type InputRequests, Keys, type Logger, type SessionRecord } from '@taskgate/core';
import {
  CancelledNotificationParamsSchema,
  isJsonRpcErrorResponse,
  type JsonRpcErrorResponse,
  type JsonRpcNotification,
  type JsonRpcResultResponse,
  ProtocolError,
} from '@taskgate/protocol';
import { type CancelServices, removeWaitingJob } from '../tasks/cancel-call.js';

/** A message of an established session that is not a request: who sent it, and the services it uses. */
export interface SessionMessage<S> {
  readonly services: S;
  readonly session: SessionRecord;
  readonly owner: string;
  readonly logger: Logger;
}

/**
 * A notification from the client. `notifications/cancelled` cancels the direct call it names (on whichever
 * gateway runs its stream); initialized, progress and unknown notifications need nothing.
 */
export async function onNotification(
  ctx: SessionMessage<CancelServices & { readonly calls: DirectCalls }>,
  notification: JsonRpcNotification,
): Promise<void> {
  if (notification.method !== 'notifications/cancelled') return;
  const parsed = CancelledNotificationParamsSchema.safeParse(notification.params);
  if (!parsed.success) {
    throw ProtocolError.invalidParams(
      'Invalid params for notifications/cancelled: requestId must be a string or an integer',
    );
  }
  const { requestId, reason } = parsed.data;
  if (requestId === undefined) return;
  const { services } = ctx;
  const taskId = await services.calls.find(ctx.session.sessionId, requestId);
  if (taskId === undefined) return;
  const message = reason === undefined ? 'Cancelled by the client' : `Cancelled by the client: ${reason}`;
  try {
    const task = await services.tasks.getOwned(ctx.owner, taskId);
    // Gone before the task turns cancelled: the call's stream (on whichever pod) then sends no response.
    await services.calls.close(ctx.session.sessionId, requestId);
    await services.tasks.cancel(ctx.owner, taskId, message);
    ctx.logger.info({ audit: 'call.cancelled', taskId, tool: task.tool }, 'direct call cancelled by the client');
    await removeWaitingJob(services, task.tool, taskId, ctx);
  } catch (error) {
    // Finished or expired meanwhile: nothing left to cancel.
    if (!(error instanceof ProtocolError)) throw error;
  }
}

/**
 * The client's answer to a server-to-client request (elicitation, sampling): recorded for the waiting worker,
 * whichever gateway receives it (INP-4: the worker then moves the task back to `working`). The first answer
 * wins; a repeated one (a request delivered twice) is accepted and ignored. Returns false when no pending
 * request of this owner has that id.
 */
export async function onResponse(
  ctx: SessionMessage<{ readonly inputs: InputRequests }>,
  response: JsonRpcResultResponse | JsonRpcErrorResponse,
): Promise<boolean> {
  if (typeof response.id !== 'string') return false;
  const answer = isJsonRpcErrorResponse(response) ? { error: response.error } : { result: response.result };
  const outcome = await ctx.services.inputs.answer(response.id, Keys.ownerId(ctx.owner), answer);
  return outcome !== 'not_found';
}
