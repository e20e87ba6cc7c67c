import type { CeleryHandOffs, CeleryMeta, Logger } from '@taskgate/core';
import { errorMessage } from '@taskgate/core';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { EventApplier } from '../apply-event.js';
import type { CeleryToolConfig } from '../config.js';
import { isRecord } from '../mapping.js';
import type { CeleryAmqpLink } from './celery-amqp-link.js';
import { celeryStep, stateDigest } from './celery-states.js';

/** States taken from the queue at once; they are applied one after the other, in order. */
const PREFETCH = 32;
/** A state that could not be applied (taskgate's Redis unreachable) goes back to the queue after this (ms). */
const REQUEUE_AFTER_MS = 1_000;

export interface RpcResultsDeps {
  readonly link: CeleryAmqpLink;
  /** The durable queue the `rpc://` states come to (the tools' `resultQueue`). */
  readonly queue: string;
  /** The tools whose tasks' states come to this queue, by name. */
  readonly tools: ReadonlyMap<string, CeleryToolConfig>;
  readonly handOffs: CeleryHandOffs;
  readonly applier: EventApplier;
  readonly logger: Logger;
  readonly onError: (error: Error) => void;
}

/** A state as Celery's `rpc://` backend sends it: `{task_id, status, result, traceback, children}`, JSON. */
function metaOf(message: ConsumeMessage): CeleryMeta | undefined {
  try {
    const meta: unknown = JSON.parse(message.content.toString('utf8'));
    return isRecord(meta) && typeof meta.status === 'string' ? (meta as unknown as CeleryMeta) : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Applies one state to its task, once: a progress or status is recorded (its digest) before it is applied,
 * so a state delivered again (a bridge died before its ack) changes nothing; an end is applied by the task
 * store, which refuses a second finish. A state of a task that is not a working task of these tools (ended,
 * cancelled, unknown) is dropped.
 */
async function applyState(deps: RpcResultsDeps, message: ConsumeMessage): Promise<void> {
  const meta = metaOf(message);
  const taskId = message.properties.correlationId ?? (meta?.task_id as string | undefined);
  if (meta === undefined || typeof taskId !== 'string') {
    deps.logger.warn({ queue: deps.queue }, 'celery rpc message without a state dropped');
    return;
  }
  const task = await deps.applier.working(taskId, deps.tools);
  if (task === undefined) {
    deps.logger.debug({ taskId, state: meta.status }, 'celery rpc state of no working task dropped');
    return;
  }
  const { ref, tool } = task;
  const step = celeryStep(tool, meta);
  const digest = stateDigest(meta);
  switch (step.kind) {
    case 'none':
      return;
    case 'completed':
    case 'failed':
      if (step.kind === 'failed' && step.traceback !== undefined) {
        deps.logger.warn({ taskId, celeryTask: tool.celery.task, traceback: step.traceback }, 'celery task failed');
      }
      await deps.applier.finish(ref, tool, step.result);
      await deps.handOffs.claim(taskId, digest);
      return;
    case 'cancelled':
      await deps.applier.cancel(taskId, tool, step.text);
      await deps.handOffs.claim(taskId, digest);
      return;
    default:
      if (!(await deps.handOffs.claim(taskId, digest))) return;
      if (step.kind === 'status') await deps.applier.status(ref, step.text);
      else await deps.applier.report(ref, step);
  }
}

/**
 * Consumes the states Celery's `rpc://` backend sends to `queue` (the task message's `reply_to`, with
 * `correlation_id` = task id) and applies each to its task, whichever bridge follows it. The queue is
 * durable, so states sent while no bridge runs wait for one; it has a single active consumer, so the
 * replicas share it in turn and a task's states are applied in the order Celery sent them. A state is
 * acknowledged once applied.
 */
export function consumeRpcResults(deps: RpcResultsDeps): void {
  deps.link.keepConsuming(async (channel: Channel) => {
    await channel.assertQueue(deps.queue, { durable: true, arguments: { 'x-single-active-consumer': true } });
    await channel.prefetch(PREFETCH);
    let chain = Promise.resolve();
    await channel.consume(deps.queue, (message) => {
      if (message === null) return;
      chain = chain.then(async () => {
        try {
          await applyState(deps, message);
          channel.ack(message);
        } catch (error) {
          deps.logger.warn({ queue: deps.queue, err: errorMessage(error) }, 'celery rpc state not applied; requeued');
          await new Promise((resolve) => setTimeout(resolve, REQUEUE_AFTER_MS));
          try {
            channel.nack(message, false, true);
          } catch {
            // The channel closed: RabbitMQ gives the message to the next consumer anyway.
          }
        }
      });
    });
    deps.logger.info({ queue: deps.queue }, 'consuming celery rpc results');
  }, deps.onError);
}
