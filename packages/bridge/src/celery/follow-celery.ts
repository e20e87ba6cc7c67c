import {
  type CeleryHandOffs,
  type CeleryMeta,
  type CeleryResults,
  errorMessage,
  inSpan,
  SpanKind,
  traceCarrierOf,
} from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { TaskAbortedError, type ToolContext } from '@taskgate/worker';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import type { CeleryToolConfig } from '../config.js';
import { failedResult } from '../mapping.js';
import { taskParts } from './celery-message.js';
import { celeryStep, stateDigest } from './celery-states.js';
import type { CeleryTransport } from './celery-transport.js';

export interface CeleryDeps {
  readonly tool: CeleryToolConfig;
  readonly broker: CeleryTransport;
  /** The Redis result backend; undefined with `rpc`, whose states the bridges' result consumer applies. */
  readonly results: CeleryResults | undefined;
  /** The queue Celery's `rpc://` backend sends the task's states to ('' without `rpc`). */
  readonly replyTo: string;
  readonly handOffs: CeleryHandOffs;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  /** How often the task's result key (and, while it waits, its place in the queue) is re-read (ms). */
  readonly pollMs: number;
}

/** One execution's view of its task: the status it showed, the states it applied, how to wake its loop. */
interface Follow {
  readonly deps: CeleryDeps;
  readonly ctx: ToolContext;
  readonly heard: CeleryMeta[];
  readonly applied: Set<string>;
  shown?: string;
  /** Whether the message may still wait in the broker's list (once taken, a worker or the backend has it). */
  mayBeQueued: boolean;
  wake: () => void;
}

function status(follow: Follow, text: string): void {
  if (text === follow.shown) return;
  follow.shown = text;
  void follow.ctx.setStatusMessage(text);
}

/** Sleeps `ms` or until woken (a state heard, the task cancelled). */
function nap(follow: Follow, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    follow.wake = () => {
      clearTimeout(timer);
      resolve();
    };
  });
}

/**
 * One execution of a Celery-bridged tool: sends the task's one Celery message (Celery task id = taskgate task
 * id; a hand-off record in taskgate's Redis keeps a re-run from sending it twice), then follows the result
 * backend — every state published on the task's channel as it happens, and the task's key (its latest state)
 * read at start and every `pollMs` — until a state ends the task. Each state is applied once, across
 * crashes and replicas (its digest is recorded before it is applied); the end is applied by the task store,
 * which refuses a second finish.
 */
export async function followCelery(
  deps: CeleryDeps,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const follow: Follow = { deps, ctx, heard: [], applied: new Set(), mayBeQueued: true, wake: () => {} };
  const onAbort = (): void => follow.wake();
  ctx.signal.addEventListener('abort', onAbort);
  const unwatch =
    deps.results?.watch(ctx.taskId, (meta) => {
      follow.heard.push(meta);
      follow.wake();
    }) ?? (() => {});
  try {
    await handOff(follow, args);
    for (;;) {
      if (ctx.signal.aborted) return await aborted(deps, ctx, ctx.signal.reason);
      const napped = nap(follow, deps.pollMs);
      const end = await applyHeard(follow);
      if (end !== undefined) return end;
      await napped;
    }
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    unwatch();
  }
}

/** Sends the task's message unless it was sent; while the broker is down, says so and tries again. */
async function handOff(follow: Follow, args: Record<string, unknown>): Promise<void> {
  const { deps, ctx } = follow;
  const { tool, broker, handOffs, results } = deps;
  const { queue } = tool.celery;
  while (!ctx.signal.aborted) {
    try {
      const state = await handOffs.begin(ctx.taskId);
      if (state === 'sent') return;
      // Cut short by a crash: sent if the broker or the backend has it, or a state of it was applied (the
      // window is one LPUSH, or one confirmed publish, wide). RabbitMQ cannot tell: there it is sent again.
      const sent =
        state === 'sending' &&
        ((await broker.waits(queue, ctx.taskId)) === true ||
          (results !== undefined && (await results.meta(ctx.taskId)) !== undefined) ||
          (await handOffs.appliedAny(ctx.taskId)));
      if (!sent) {
        // The publish is a producer span; the message carries its trace context.
        const attributes = {
          'messaging.system': broker.amqp ? 'rabbitmq' : 'redis',
          'messaging.operation.type': 'send',
          'messaging.operation.name': 'publish',
          'messaging.destination.name': queue,
          'messaging.message.id': ctx.taskId,
          'mcp.task.id': ctx.taskId,
        };
        // `rpc`: the result consumer writes the task's states, this execution the message's place. Shown
        // before the message leaves, so it cannot land after the STARTED state a fast worker sends back.
        if (results === undefined) await showPlace(follow);
        await inSpan(`publish ${queue}`, { kind: SpanKind.PRODUCER, attributes }, async () => {
          const parts = taskParts(tool.celery, ctx.taskId, args, Date.now(), traceCarrierOf(), deps.replyTo);
          await broker.send(queue, parts);
        });
        deps.metrics.handedOff.inc({ tool: tool.name });
        ctx.logger.info({ queue, celeryTask: tool.celery.task }, 'celery task sent');
      }
      await handOffs.sent(ctx.taskId);
      return;
    } catch (error) {
      ctx.logger.warn({ queue, err: errorMessage(error) }, 'could not send the celery task; retrying');
      status(follow, `The Celery broker is unreachable (${errorMessage(error)}); the task is sent once it is back`);
      await nap(follow, deps.pollMs);
    }
  }
}

/** Applies the states heard on the channel, then the key's; the task's outcome once a state ended it. */
async function applyHeard(follow: Follow): Promise<CallToolResult | undefined> {
  const { deps, ctx } = follow;
  try {
    for (let meta = follow.heard.shift(); meta !== undefined; meta = follow.heard.shift()) {
      const end = await apply(follow, meta);
      if (end !== undefined) return end;
    }
    if (deps.results === undefined) {
      // `rpc`: the result consumer applies the states; this execution shows where the message is meanwhile,
      // and whether the broker can be reached (its queue is checked: that throws while it is down).
      const consumers = await deps.broker.consumers(deps.tool.celery.queue);
      reconnected(follow);
      if (follow.mayBeQueued && (await deps.handOffs.appliedAny(ctx.taskId))) follow.mayBeQueued = false;
      await showPlace(follow, consumers);
      return undefined;
    }
    const meta = await deps.results.meta(ctx.taskId);
    if (meta !== undefined) return await apply(follow, meta);
    if (follow.applied.size > 0 || (await deps.handOffs.appliedAny(ctx.taskId))) {
      // A state was stored before and the key is gone: Celery's `result_expires` removed it.
      const result = failedResult(
        'The Celery result expired from the result backend (result_expires) before the bridge could read it',
      );
      await deps.applier.reconcile(ctx.taskId, deps.tool, result);
      return result;
    }
    reconnected(follow);
    await showPlace(follow);
  } catch (error) {
    status(follow, `The Celery broker or result backend is unreachable (${errorMessage(error)}); waiting for it`);
  }
  return undefined;
}

/** After an outage the task showed: says the broker and backend are back (the next state tells more). */
function reconnected(follow: Follow): void {
  if (follow.shown?.startsWith('The Celery broker') !== true) return;
  status(follow, "The Celery broker is reachable again; waiting for the task's next state");
}

/**
 * While no state came, shows where the message is: waiting in the queue or taken (Redis can tell), else
 * (RabbitMQ) waiting for a worker when the queue has no consumer.
 */
async function showPlace(follow: Follow, known?: number): Promise<void> {
  if (!follow.mayBeQueued) return;
  const { broker, tool } = follow.deps;
  const { queue } = tool.celery;
  const waits = await broker.waits(queue, follow.ctx.taskId);
  if (waits !== undefined) {
    follow.mayBeQueued = waits;
    status(follow, waits ? `Queued in Celery queue '${queue}': waiting for a worker` : 'Taken by a Celery worker');
    return;
  }
  const consumers = known ?? (await broker.consumers(queue));
  if (consumers === 0) status(follow, `Queued in Celery queue '${queue}': waiting for a worker`);
  else if (consumers !== undefined) status(follow, `In Celery queue '${queue}', which ${consumers} worker(s) consume`);
}

/** Applies one state to the task (once); the outcome when it ended the task. */
async function apply(follow: Follow, meta: CeleryMeta): Promise<CallToolResult | undefined> {
  const { deps, ctx } = follow;
  const digest = stateDigest(meta);
  // The key can lag behind the channel: a state applied here already is never applied again (nor an older one).
  if (follow.applied.has(digest)) return undefined;
  const step = celeryStep(deps.tool, meta);
  if (step.kind === 'none') return undefined;
  follow.applied.add(digest);
  follow.mayBeQueued = false;
  if (step.kind === 'completed' || step.kind === 'failed') {
    if (step.kind === 'failed' && step.traceback !== undefined) {
      ctx.logger.warn({ celeryTask: deps.tool.celery.task, traceback: step.traceback }, 'celery task failed');
    }
    await deps.applier.reconcile(ctx.taskId, deps.tool, step.result);
    await deps.handOffs.claim(ctx.taskId, digest);
    return step.result;
  }
  if (step.kind === 'cancelled') {
    await deps.applier.cancel(ctx.taskId, deps.tool, step.text);
    await deps.handOffs.claim(ctx.taskId, digest);
    return failedResult(step.text);
  }
  // Recorded first, applied after: a crash in between loses one progress report, never repeats it.
  if (!(await deps.handOffs.claim(ctx.taskId, digest))) return undefined;
  if (step.kind === 'status') {
    status(follow, step.text);
    return undefined;
  }
  await ctx.progress(step.progress, step.total, step.message);
  const of = step.total !== undefined ? ` of ${step.total}` : '';
  status(follow, step.message ?? `Progress ${step.progress}${of}`);
  return undefined;
}

/**
 * Takes the task's Celery message back: out of the broker's list if no worker took it yet (Redis), else
 * through a `revoke` broadcast on the workers' control channel (with `cancel: terminate`, the worker's child
 * running it gets SIGTERM). 'removed' or 'revoked'.
 */
export async function withdrawCelery(
  deps: Pick<CeleryDeps, 'tool' | 'broker'>,
  taskId: string,
): Promise<'removed' | 'revoked' | 'revoked, no worker heard it'> {
  const { celery } = deps.tool;
  if (await deps.broker.withdraw(celery.queue, taskId)) return 'removed';
  const heard = await deps.broker.revoke(taskId, celery.cancel === 'terminate');
  return heard === 'sent' ? 'revoked' : 'revoked, no worker heard it';
}

/**
 * The task was cancelled or is gone (its message is taken back), or the bridge is stopping (another bridge
 * follows the task on). Throwing lets the worker runtime discard the result or hand the task on.
 */
async function aborted(deps: CeleryDeps, ctx: ToolContext, reason: unknown): Promise<never> {
  const { taskId, logger } = ctx;
  const kind = reason instanceof TaskAbortedError ? reason.kind : undefined;
  // A message never sent (cancelled during a broker outage) needs no taking back.
  if ((kind === 'cancelled' || kind === 'gone') && (await deps.handOffs.wasSent(taskId).catch(() => true))) {
    await withdrawCelery(deps, taskId).then(
      (how) =>
        logger.info({ taskId, celeryTask: deps.tool.celery.task, how }, 'celery task of an ended task withdrawn'),
      (error: unknown) => logger.warn({ taskId, err: errorMessage(error) }, 'could not withdraw the celery task'),
    );
  }
  throw reason instanceof Error ? reason : new Error('aborted');
}
