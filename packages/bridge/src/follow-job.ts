import type { ExistingJobEvent, ExistingQueue } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { TaskAbortedError, type ToolContext } from '@taskgate/worker';
import type { JobsOptions } from 'bullmq';
import type { BridgeMetrics } from './bridge-metrics.js';
import type { BridgedToolConfig } from './config.js';
import { completedResult, failedResult, jobData, progressOf } from './mapping.js';

/** Completed and failed jobs stay this long unless the config says otherwise, so a restarted bridge finds them. */
const KEEP_FINISHED = { age: 24 * 3600 };

export interface FollowDeps {
  readonly tool: BridgedToolConfig;
  readonly queue: ExistingQueue;
  readonly metrics: BridgeMetrics;
  /** Safety-net re-read of the job's state, for events missed while the event stream reconnected (ms). */
  readonly pollMs: number;
}

function jobOptions(tool: BridgedToolConfig): JobsOptions {
  return { removeOnComplete: KEEP_FINISHED, removeOnFail: KEEP_FINISHED, ...tool.job.options } as JobsOptions;
}

/**
 * One execution of a bridged tool: hands the task to the existing queue (job id = task id: adding it again
 * after a crash adds nothing), then follows the job until it ends — from its queue's event stream, with a
 * re-read of the job's state at every event and every `pollMs` — and returns its outcome as the tool's
 * result. Progress becomes MCP progress and the task's statusMessage. The state is read after the event
 * subscription starts, so this execution (a first run, or a re-run after a bridge died) sees everything
 * that happened before it too.
 */
export async function followJob(
  deps: FollowDeps,
  args: Record<string, unknown>,
  ctx: ToolContext,
): Promise<CallToolResult> {
  const { tool, queue, metrics } = deps;
  const jobId = ctx.taskId;
  const queueName = tool.queue.name;
  const lagLabel = { queue: `${tool.queue.prefix}:${queueName}` };
  let wake: () => void = () => {};
  let shownStatus: string | undefined;
  let shownProgress: string | undefined;
  let lastEvent: ExistingJobEvent | undefined;

  const status = (text: string): void => {
    if (text === shownStatus) return;
    shownStatus = text;
    void ctx.setStatusMessage(text);
  };
  const progress = (data: unknown): void => {
    const reported = progressOf(data);
    const key = JSON.stringify(data);
    if (reported === undefined || key === shownProgress) return;
    shownProgress = key;
    void ctx.progress(reported.progress, reported.total, reported.message);
    const of = reported.total !== undefined ? ` of ${reported.total}` : '';
    status(reported.message ?? `Progress ${reported.progress}${of}`);
  };
  const unfollow = queue.follow(jobId, (event) => {
    metrics.eventLag.set(lagLabel, Math.max(0, Date.now() - event.eventMs) / 1000);
    if (event.kind === 'progress') progress(event.data);
    else if (event.kind === 'active') status(`Running in queue '${queueName}'`);
    else lastEvent = event;
    wake();
  });
  const onAbort = (): void => wake();
  ctx.signal.addEventListener('abort', onAbort);
  const applied = (outcome: 'completed' | 'failed', result: CallToolResult): CallToolResult => {
    metrics.applied.inc({ tool: tool.name, outcome });
    return result;
  };
  try {
    if (await queue.add(tool.job.name, jobData(tool, args), jobOptions(tool), jobId)) {
      metrics.handedOff.inc({ tool: tool.name });
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
      if (job.state === 'completed') return applied('completed', completedResult(tool, job.returnvalue));
      if (job.state === 'failed') return applied('failed', failedResult(job.failedReason));
      if (job.state === 'missing') {
        // Removed right after finishing (the config's removeOnComplete/removeOnFail): the event said how.
        if (lastEvent?.kind === 'completed') return applied('completed', completedResult(tool, lastEvent.returnvalue));
        if (lastEvent?.kind === 'failed') return applied('failed', failedResult(lastEvent.failedReason));
        return applied('failed', failedResult(`The job was removed from queue '${queueName}' before it finished`));
      }
      // BullMQ's progress of a job that never reported any is 0: nothing to relay.
      if (job.progress !== 0) progress(job.progress);
      if (job.state === 'waiting' || job.state === 'delayed') {
        status(`Queued in '${queueName}': waiting for a worker of the queue`);
      } else if (job.state === 'active' && shownProgress === undefined) {
        status(`Running in queue '${queueName}'`);
      }
      await woken;
      clearTimeout(timer);
    }
  } finally {
    unfollow();
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
