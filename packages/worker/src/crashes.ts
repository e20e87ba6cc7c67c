import type { TaskStore } from '@taskgate/core';
import type { Job } from 'bullmq';

/**
 * How many earlier executions of a job's task crashed (their worker died, or lost the job's lock, before it
 * finished). BullMQ's `stalledCounter` counts every lapse of the job's lock while it was active, also one when
 * no worker ran it: Redis ran a fetch (`moveToActive`) whose reply was lost in an outage, and the job sat
 * active until the stalled checker took it back. The task's record counts the executions that began
 * (`TaskStore.start`, written before each tool runs); those that failed by themselves are `attemptsMade`.
 * A stall is a crash only when an execution began and neither failed nor finished: at most `stalledCounter`,
 * at most the executions begun minus the failed ones. A job that never stalled costs no read.
 */
export async function crashesBefore(store: Pick<TaskStore, 'read'>, taskId: string, job: Job): Promise<number> {
  if (job.stalledCounter === 0) return 0;
  const task = await store.read(taskId);
  // A record lists an execution's number only once one began (`attempt` 1 is implied by `startedAt`).
  const begun = task?.startedAt === undefined ? 0 : (task.attempt ?? 1);
  return Math.min(job.stalledCounter, Math.max(0, begun - job.attemptsMade));
}
