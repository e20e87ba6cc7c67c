import type { ExistingJobState, ExistingQueue } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { TaskAbortedError, type ToolContext } from '@taskgate/worker';
import type { JobsOptions } from 'bullmq';
import type { EventApplier } from './apply-event.js';
import type { BridgeMetrics } from './bridge-metrics.js';
import type { BridgedToolConfig } from './config.js';
import { completedResult, failedResult, jobData } from './mapping.js';
import type { QueueFollower } from './queue-follower.js';

/** Completed and failed jobs stay this long unless the config says otherwise, so a restarted bridge finds them. */
const KEEP_FINISHED = { age: 24 * 3600 };

export interface FollowDeps {
  readonly tool: BridgedToolConfig;
  readonly queue: ExistingQueue;
  readonly follower: QueueFollower;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  /** How often the job's state is re-read (ms). */
  readonly pollMs: number;
  /**
   * How long a job may have ended before its task, read by state, is finished here rather than by the event
   * stream's follower (ms): longer than a standby replica needs to take over the stream.
   */
  readonly graceMs: number;
}

function jobOptions(tool: BridgedToolConfig): JobsOptions {
  return { removeOnComplete: KEEP_FINISHED, removeOnFail: KEEP_FINISHED, ...tool.job.options } as JobsOptions;
}

/** The outcome a job's state says, for a job that ended (or vanished); undefined while it runs or waits. */
function stateOutcome(tool: BridgedToolConfig, job: ExistingJobState): CallToolResult | undefined {
  if (job.state === 'completed') return completedResult(tool, job.returnvalue);
  if (job.state === 'failed') return failedResult(job.failedReason);
  if (job.state === 'missing') {
    return failedResult(`The job was removed from queue '${tool.queue.name}' before it finished`);
  }
  return undefined;
}

/**
 * One execution of a bridged tool: hands the task to the existing queue (job id = task id: adding it again
 * after a crash adds nothing), then stays with the task until it ends. The queue's event stream follower
 * applies the job's progress and outcome to the task; this execution re-reads the job's state every
 * `pollMs` to show that it is queued, and reconciles by state — finishes the task from the job's state —
 * when the job finished before a point the follower had to skip to (its position was lost), or ended more
 * than `graceMs` ago and its task is still working.
 */
export async function followJob(
  deps: FollowDeps,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const { tool, queue, follower } = deps;
  const jobId = ctx.taskId;
  const queueName = tool.queue.name;
  let wake: () => void = () => {};
  let shownStatus: string | undefined;
  let endedAt: number | undefined;

  const status = (text: string): void => {
    if (text === shownStatus) return;
    shownStatus = text;
    void ctx.setStatusMessage(text);
  };
  const offFallback = follower.onFallback(() => wake());
  const onAbort = (): void => wake();
  ctx.signal.addEventListener('abort', onAbort);
  try {
    if (await queue.add(tool.job.name, jobData(tool, args), jobOptions(tool), jobId)) {
      deps.metrics.handedOff.inc({ tool: tool.name });
      ctx.logger.info({ queue: queueName, jobName: tool.job.name }, 'job handed off');
    }
    for (;;) {
      if (ctx.signal.aborted) return await aborted(deps, jobId, ctx.signal.reason);
      let timer: NodeJS.Timeout | undefined;
      const woken = new Promise<void>((resolve) => {
        wake = resolve;
        timer = setTimeout(resolve, deps.pollMs);
      });
      const job = await queue.state(jobId);
      const outcome = stateOutcome(tool, job);
      if (outcome !== undefined) {
        endedAt ??= Date.now();
        const finishedOn = 'finishedOn' in job ? job.finishedOn : undefined;
        const skipped = finishedOn !== undefined && finishedOn <= follower.skippedUntilMs;
        if (skipped || Date.now() - endedAt >= deps.graceMs) {
          ctx.logger.info({ queue: queueName, state: job.state }, 'task reconciled by its job state');
          await deps.applier.reconcile(jobId, tool, outcome);
          return outcome;
        }
      } else if (job.state === 'waiting' || job.state === 'delayed') {
        status(`Queued in '${queueName}': waiting for a worker of the queue`);
      } else if (job.state === 'active' && shownStatus !== undefined) {
        status(`Running in queue '${queueName}'`);
      }
      await woken;
      clearTimeout(timer);
    }
  } finally {
    offFallback();
    ctx.signal.removeEventListener('abort', onAbort);
  }
}

/**
 * The task was cancelled (or the bridge is stopping): a job that has not started is removed from its queue;
 * an active one runs on in its worker (BullMQ cannot cancel a job in another process) and its outcome is
 * discarded. Throwing lets the worker runtime discard the result, or hand the job to another bridge on shutdown.
 */
async function aborted(deps: FollowDeps, jobId: string, reason: unknown): Promise<never> {
  const kind = reason instanceof TaskAbortedError ? reason.kind : undefined;
  if (kind === 'cancelled' || kind === 'gone') await deps.queue.removeIfWaiting(jobId).catch(() => false);
  throw reason instanceof Error ? reason : new Error('aborted');
}
