import { errorMessage, type StoredTask } from '@taskgate/core';
import type { SessionContext } from '../rpc/context.js';
import { type OutboxRendering, outboxMessage } from '../tasks/outbox-messages.js';
import { OutboxRelay } from '../tasks/outbox-relay.js';
import { streamLeaseMs } from './connect-stream.js';
import type { LoggedStream } from './logged-stream.js';

/** A stream's hold on a task's outbox. */
export interface OutboxCarrier {
  /** Delivers everything appended so far, if this stream carries the task (call it once the task is terminal). */
  drain(): Promise<void>;
}

/**
 * Makes `stream` the carrier of the task's outbox while it is open: it claims the task's carrier lease
 * ("a tasks/result stream is open for this task", visible to every pod) and refreshes it at heartbeats, or
 * keeps trying while another stream holds it; relays the outbox on every announcement; and gives the lease
 * up when the connection ends, which hands what is left to the session's GET stream (INP-5).
 *
 * A tasks/result stream that becomes the carrier first re-sends the task's pending input requests whose
 * stream is gone (`resend`, INP-3): delivered at least once, whatever happened to earlier streams.
 */
export async function carryOutbox(
  ctx: SessionContext,
  stream: LoggedStream,
  task: StoredTask,
  rendering: () => Promise<OutboxRendering>,
  resend: boolean,
): Promise<OutboxCarrier> {
  const { services } = ctx;
  const { taskId } = task;
  const leaseMs = streamLeaseMs(services);
  const relay = new OutboxRelay(services.outbox, services.delivery, stream, {
    taskId,
    mode: 'carrier',
    expiresAt: task.createdAt + task.ttl,
    rendering,
  });
  let carrying = false;
  let claiming: Promise<boolean> | undefined;

  const claim = (): Promise<boolean> => {
    if (carrying) return Promise.resolve(true);
    claiming ??= (async () => {
      try {
        const result = await services.delivery.claim(taskId, stream.streamId, stream.connectionId, leaseMs);
        if (result !== 'ok') return false;
        if (resend) await resendOrphans(ctx, stream, taskId, rendering);
        carrying = true;
        return true;
      } finally {
        claiming = undefined;
      }
    })();
    return claiming;
  };
  const pump = async (): Promise<void> => {
    if (!stream.isOpen || !(await claim())) return;
    if ((await relay.pump()) === 'not_carrier') carrying = false;
  };
  const wake = (): void => {
    pump().catch((error: unknown) => ctx.logger.warn({ taskId, err: errorMessage(error) }, 'outbox relay failed'));
  };

  // Subscribed before the first pass, so no announcement between the two is lost.
  const unsubscribe = await services.bus.subscribe(services.keys.outboxChannel(taskId), wake);
  const removeHook = services.bus.onReconnect(wake);
  stream.onClose(async () => {
    removeHook();
    await unsubscribe();
    if (carrying) await services.delivery.release(taskId, stream.streamId, stream.connectionId);
  });
  stream.onHeartbeat(async () => {
    if (!carrying) return wake();
    const refreshed = await services.delivery.refresh(taskId, stream.streamId, stream.connectionId, leaseMs);
    if (refreshed !== 'ok') carrying = false;
  });
  await pump();
  return { drain: pump };
}

/**
 * Sends the task's unanswered input requests again whose stream is gone (no connection carries it, and it
 * is not this stream): at least once, whatever happened to the stream that took them first.
 */
export async function resendOrphans(
  ctx: SessionContext,
  stream: LoggedStream,
  taskId: string,
  rendering: () => Promise<OutboxRendering>,
): Promise<void> {
  const { services } = ctx;
  const cursor = await services.delivery.cursor(taskId);
  if (cursor === '0-0') return;
  const sent = await services.outbox.range(taskId, '-', cursor);
  const orphans = await services.delivery.orphanedRequests(taskId, stream.streamId, sent);
  if (orphans.length === 0) return;
  const render = await rendering();
  for (const entry of orphans) {
    const message = outboxMessage(entry, render);
    if (message === undefined || entry.message.type !== 'request') continue;
    if (!(await stream.emit(message))) return;
    await services.delivery.recordSent(taskId, entry.message.requestId, stream.streamId);
    ctx.logger.debug({ taskId, requestId: entry.message.requestId }, 'input request sent again');
  }
}
