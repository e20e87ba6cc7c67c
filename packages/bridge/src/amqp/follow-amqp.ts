import { type AmqpHandOffs, errorMessage, inSpan, SpanKind, traceCarrierOf } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { TaskAbortedError, type ToolContext } from '@taskgate/worker';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import type { AmqpToolConfig } from '../config.js';
import { failedResult } from '../mapping.js';
import { cancelMessage, destination, type OutgoingMessage, requestMessage } from './amqp-message.js';
import type { ReplyConsumer } from './amqp-replies.js';
import { type AmqpConnection, AmqpPublishError } from './connection.js';

export interface AmqpDeps {
  readonly tool: AmqpToolConfig;
  readonly connection: AmqpConnection;
  readonly replies: ReplyConsumer;
  readonly replyQueue: string;
  readonly handOffs: AmqpHandOffs;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  /** How often the wait re-checks the broker (its connection, the request's queue) and the timeout (ms). */
  readonly pollMs: number;
}

/** One execution's view of its task: the status it showed, the reply if this process applied it. */
interface Follow {
  readonly deps: AmqpDeps;
  readonly ctx: ToolContext;
  shown?: string;
  reply?: CallToolResult;
  wake: () => void;
}

function status(follow: Follow, text: string): void {
  if (text === follow.shown) return;
  follow.shown = text;
  void follow.ctx.setStatusMessage(text).catch(() => {});
}

/** Sleeps `ms` or until woken (the reply applied here, the task cancelled). */
function nap(follow: Follow, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    follow.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/** The task's end, applied here (the task store refuses a second finish) and returned. */
async function end(follow: Follow, result: CallToolResult): Promise<CallToolResult> {
  await follow.deps.applier.reconcile(follow.ctx.taskId, follow.deps.tool, result);
  return result;
}

/**
 * One execution of an `amqp:` tool: publishes the task's one request (persistent, mandatory, confirmed;
 * `correlation_id` = the task id, `reply_to` = the connection's durable reply queue) unless the hand-off record
 * in taskgate's Redis shows the broker confirmed it before, then waits for its reply. The reply is applied by
 * whichever bridge consumes it from the shared reply queue; this execution ends with it (applied here) or is
 * aborted by the worker runtime (applied elsewhere, or the task cancelled). A request the broker cannot route, or a
 * missing exchange, fails the task at once; no reply within `timeoutMs` of the first publish fails it too.
 */
export async function followAmqp(
  deps: AmqpDeps,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const follow: Follow = { deps, ctx, wake: () => {} };
  const onAbort = (): void => follow.wake();
  ctx.signal.addEventListener('abort', onAbort);
  // The connection dropping or coming back shows at once in the task's statusMessage.
  deps.connection.on('disconnected', onAbort);
  deps.connection.on('connected', onAbort);
  const unwait = deps.replies.wait(ctx.taskId, (result) => {
    follow.reply = result;
    follow.wake();
  });
  try {
    const handedOff = await handOff(follow, args);
    if (typeof handedOff !== 'number') return handedOff ?? (await aborted(deps, ctx, args));
    const { timeoutMs, routingKey } = deps.tool.amqp;
    const deadline = timeoutMs === undefined ? Number.POSITIVE_INFINITY : handedOff + timeoutMs;
    for (;;) {
      if (follow.reply !== undefined) return follow.reply;
      if (ctx.signal.aborted) return await aborted(deps, ctx, args);
      if (Date.now() >= deadline) {
        return await end(follow, failedResult(`No reply from routing key '${routingKey}' within ${timeoutMs} ms`));
      }
      const napped = nap(follow, Math.max(1, Math.min(deps.pollMs, deadline - Date.now())));
      await showWait(follow);
      await napped;
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    deps.connection.off('disconnected', onAbort);
    deps.connection.off('connected', onAbort);
    unwait();
  }
}

/**
 * Publishes the request unless the broker confirmed it before; while the broker is unreachable, says so and
 * tries again. The time of the first confirmed publish; a result when the publish ended the task (unroutable,
 * no such exchange); undefined when the task was aborted first.
 */
async function handOff(follow: Follow, args: Record<string, unknown>): Promise<number | CallToolResult | undefined> {
  const { deps, ctx } = follow;
  const { tool, connection, handOffs, metrics } = deps;
  const { amqp } = tool;
  // Confirmed by the broker in this execution: a failed write of the record is retried without publishing again.
  let confirmedAt: number | undefined;
  while (!ctx.signal.aborted) {
    try {
      if (!connection.connected) {
        status(
          follow,
          `RabbitMQ connection '${connection.name}' is down (${downReason(connection)}); the request is sent once it is back`,
        );
        await connection.whenConnected(ctx.signal).catch(() => {});
        continue;
      }
      if (confirmedAt !== undefined) {
        await handOffs.sent(ctx.taskId, confirmedAt);
        return confirmedAt;
      }
      const before = await handOffs.begin(ctx.taskId);
      if (before.state === 'sent') return before.sentAt;
      // 'sending': a crash cut a publish short and no record tells whether the broker took it; it is published
      // again with the same message_id (the task id), and its reply is applied once whatever the service does.
      const attributes = {
        'messaging.system': 'rabbitmq',
        'messaging.operation.type': 'send',
        'messaging.operation.name': 'publish',
        'messaging.destination.name': amqp.exchange === '' ? amqp.routingKey : amqp.exchange,
        'messaging.rabbitmq.destination.routing_key': amqp.routingKey,
        'messaging.message.id': ctx.taskId,
        'mcp.task.id': ctx.taskId,
      };
      const name = `publish ${amqp.exchange === '' ? amqp.routingKey : amqp.exchange}`;
      const outcome = await inSpan(name, { kind: SpanKind.PRODUCER, attributes }, async () => {
        const message = requestMessage(amqp, ctx.taskId, args, deps.replyQueue, Date.now(), traceCarrierOf());
        return await connection.publish(amqp.exchange, amqp.routingKey, message.content, message.options);
      });
      if (outcome === 'unroutable') {
        metrics.amqpUnroutable.inc({ tool: tool.name });
        ctx.logger.warn({ exchange: amqp.exchange, routingKey: amqp.routingKey }, 'amqp request unroutable');
        return await end(
          follow,
          failedResult(`No queue is bound to ${destination(amqp)}: the request was not delivered`),
        );
      }
      const sentAt = Date.now();
      confirmedAt = sentAt;
      metrics.amqpPublished.inc({ tool: tool.name });
      metrics.handedOff.inc({ tool: tool.name });
      await handOffs.sent(ctx.taskId, sentAt);
      ctx.logger.info({ exchange: amqp.exchange, routingKey: amqp.routingKey }, 'amqp request published');
      status(follow, `Request sent to ${destination(amqp)}; waiting for the reply`);
      return sentAt;
    } catch (error) {
      if (error instanceof AmqpPublishError && error.code === 404) {
        return await end(
          follow,
          failedResult(
            `Exchange '${amqp.exchange}' does not exist: the request to ${destination(amqp)} was not delivered`,
          ),
        );
      }
      ctx.logger.warn(
        { routingKey: amqp.routingKey, err: errorMessage(error) },
        'could not publish the amqp request; retrying',
      );
      status(follow, `Could not publish the request to ${destination(amqp)} (${errorMessage(error)}); retrying`);
      await nap(follow, deps.pollMs);
    }
  }
  return undefined;
}

function downReason(connection: AmqpConnection): string {
  return connection.lastError === undefined ? 'connecting' : errorMessage(connection.lastError);
}

/** Tells what the request waits for: the broker back, a consumer of its queue, or the service's reply. */
async function showWait(follow: Follow): Promise<void> {
  const { connection, tool } = follow.deps;
  const { amqp } = tool;
  if (!connection.connected) {
    status(
      follow,
      `RabbitMQ connection '${connection.name}' is down (${downReason(connection)}); the request stays in its queue and its reply is applied once the bridge reconnects`,
    );
    return;
  }
  if (amqp.exchange !== '') {
    status(follow, `Request sent to ${destination(amqp)}; waiting for the reply`);
    return;
  }
  try {
    const queue = await connection.queueState(amqp.routingKey);
    if (queue !== undefined && queue.consumers === 0) {
      status(follow, `The request waits in queue '${amqp.routingKey}': no consumer is attached yet`);
    } else {
      status(follow, `Request sent to queue '${amqp.routingKey}'; waiting for the reply`);
    }
  } catch {
    // The connection dropped meanwhile: the next round says so.
  }
}

/** Publishes the tool's cancel message for a cancelled task whose request went out (when the tool has one). */
export async function sendCancel(deps: AmqpDeps, taskId: string, args: Record<string, unknown>): Promise<void> {
  const { amqp } = deps.tool;
  const message: OutgoingMessage | undefined = cancelMessage(amqp, taskId, args);
  if (message === undefined || amqp.cancel === undefined) return;
  if ((await deps.handOffs.read(taskId)) === undefined) return;
  const exchange = amqp.cancel.exchange ?? amqp.exchange;
  const outcome = await deps.connection.publish(exchange, amqp.cancel.routingKey, message.content, message.options);
  if (outcome === 'unroutable') throw new Error(`no queue is bound to routing key '${amqp.cancel.routingKey}'`);
}

/**
 * The task was cancelled or is gone (the service is told, with the tool's cancel message), finished elsewhere, or
 * the bridge is stopping (another bridge waits on). Throwing lets the worker runtime discard the result or hand
 * the task on.
 */
async function aborted(deps: AmqpDeps, ctx: ToolContext, args: Record<string, unknown>): Promise<never> {
  const reason: unknown = ctx.signal.reason;
  const kind = reason instanceof TaskAbortedError ? reason.kind : undefined;
  if (kind === 'cancelled' || kind === 'gone') {
    await sendCancel(deps, ctx.taskId, args).then(
      () =>
        deps.tool.amqp.cancel !== undefined &&
        ctx.logger.info({ routingKey: deps.tool.amqp.cancel.routingKey }, 'amqp cancel message sent'),
      (error: unknown) => ctx.logger.warn({ err: errorMessage(error) }, 'could not send the amqp cancel message'),
    );
  }
  throw reason instanceof Error ? reason : new Error('aborted');
}
