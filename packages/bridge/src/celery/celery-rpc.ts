import type { CeleryHandOffs, CeleryMeta, Logger } from '@taskgate/core';
import { errorMessage } from '@taskgate/core';
import type { Channel, ConsumeMessage } from 'amqplib';
import type { EventApplier } from '../apply-event.js';
import type { CeleryToolConfig } from '../config.js';
import { isRecord } from '../mapping.js';
import type { CeleryAmqpLink } from './celery-amqp-link.js';
import { celeryStep, stateDigest } from './celery-states.js';
import type { CeleryTransport } from './celery-transport.js';

/** States taken from the queue at once; they are applied one after the other, in order. */
const PREFETCH = 32;
/** Task ids revoked again here, remembered so that each is revoked again once (the oldest forgotten first). */
const REVOKED_AGAIN_KEPT = 10_000;
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
  /** The broker the tools' tasks went to: a cancelled task that runs all the same is revoked again there. */
  readonly broker: CeleryTransport;
}

/** Per consumer: the cancelled tasks revoked again already. */
type RevokedAgain = Set<string>;

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
async function applyState(deps: RpcResultsDeps, message: ConsumeMessage, again: RevokedAgain): Promise<void> {
  const meta = metaOf(message);
  const taskId = message.properties.correlationId ?? (meta?.task_id as string | undefined);
  if (meta === undefined || typeof taskId !== 'string') {
    deps.logger.warn({ queue: deps.queue }, 'celery rpc message without a state dropped');
    return;
  }
  const task = await deps.applier.working(taskId, deps.tools);
  if (task === undefined) {
    deps.logger.debug({ taskId, state: meta.status }, 'celery rpc state of no working task dropped');
    await reviseCancelled(deps, taskId, meta, again);
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
 * A cancelled task that a worker runs all the same (no running worker heard its revoke) is revoked again, once,
 * when its first state comes: with `cancel: terminate`, the run stops.
 */
async function reviseCancelled(
  deps: RpcResultsDeps,
  taskId: string,
  meta: CeleryMeta,
  again: RevokedAgain,
): Promise<void> {
  if (again.has(taskId) || ['SUCCESS', 'FAILURE', 'REVOKED', 'REJECTED'].includes(meta.status)) return;
  const name = await deps.applier.cancelledTool(taskId);
  const tool = name === undefined ? undefined : deps.tools.get(name);
  if (tool === undefined) return;
  again.add(taskId);
  if (again.size > REVOKED_AGAIN_KEPT) again.delete(again.values().next().value as string);
  await deps.broker.revoke(taskId, tool.celery.cancel === 'terminate');
  deps.logger.info({ taskId, tool: tool.name, state: meta.status }, 'celery task of a cancelled task revoked again');
}

/**
 * Consumes the states Celery's `rpc://` backend sends to `queue` (the task message's `reply_to`, with
 * `correlation_id` = task id) and applies each to its task, whichever bridge follows it. The queue is
 * durable, so states sent while no bridge runs wait for one; it has a single active consumer, so the
 * replicas share it in turn and a task's states are applied in the order Celery sent them. A state is
 * acknowledged once applied.
 */
export function consumeRpcResults(deps: RpcResultsDeps): void {
  const again: RevokedAgain = new Set();
  deps.link.keepConsuming(async (channel: Channel) => {
    await channel.assertQueue(deps.queue, { durable: true, arguments: { 'x-single-active-consumer': true } });
    await channel.prefetch(PREFETCH);
    let chain = Promise.resolve();
    await channel.consume(deps.queue, (message) => {
      if (message === null) return;
      chain = chain.then(async () => {
        try {
          await applyState(deps, message, again);
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
