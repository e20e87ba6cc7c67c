import { type Job, type Processor, UnrecoverableError, WaitingError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';
import { bullmqTelemetryOption } from '../telemetry/tracing.js';

export { UnrecoverableError, WaitingError };

/** How one BullMQ worker consumes one queue. */
export interface ConsumeOptions<D> {
  /** A connection with `maxRetriesPerRequest: null` (role `bullmq-worker`), shared by the process's consumers. */
  readonly connection: Redis;
  readonly keys?: Keys;
  readonly concurrency: number;
  /** At most `max` jobs per `durationMs` across every consumer of the queue. */
  readonly limiter?: { readonly max: number; readonly durationMs: number };
  readonly lockDurationMs: number;
  readonly stalledIntervalMs: number;
  /** How often a job may stall before BullMQ fails it. */
  readonly maxStalledCount: number;
  readonly onError?: (error: Error) => void;
  /** A job BullMQ failed (this attempt; `job` may be undefined when BullMQ lost it). */
  readonly onFailed?: (job: Job<D> | undefined, error: Error) => void;
  /** BullMQ could not renew the locks of these jobs: another worker may take them. */
  readonly onLockRenewalFailed?: (jobIds: string[]) => void;
}

/** A running consumer of one queue. */
export interface QueueConsumer {
  readonly queue: string;
  /** Resolves once the consumer's connection is ready. */
  ready(): Promise<void>;
  /** Stops taking jobs and waits for the running ones. */
  close(): Promise<void>;
}

/**
 * Consumes one BullMQ queue under taskgate's key prefix: the one place where BullMQ workers are made, so that
 * the worker package speaks to Redis only through core.
 */
export function consumeQueue<D>(
  queue: string,
  processor: (job: Job<D>, token: string | undefined) => Promise<void>,
  options: ConsumeOptions<D>,
): QueueConsumer {
  const keys = options.keys ?? new Keys();
  const run = async (job: Job<D>, token: string | undefined): Promise<void> => {
    try {
      await processor(job, token);
    } catch (error) {
      if (isFinalFailure(job, error)) await forgetArguments(job);
      throw error;
    }
  };
  const worker = new Worker<D>(queue, run as Processor<D>, {
    connection: options.connection,
    prefix: keys.bullPrefix(queue),
    concurrency: options.concurrency,
    ...(options.limiter !== undefined && {
      limiter: { max: options.limiter.max, duration: options.limiter.durationMs },
    }),
    lockDuration: options.lockDurationMs,
    stalledInterval: options.stalledIntervalMs,
    maxStalledCount: options.maxStalledCount,
    ...bullmqTelemetryOption(),
  });
  worker.on('error', (error) => options.onError?.(error));
  if (options.onFailed !== undefined) worker.on('failed', options.onFailed);
  if (options.onLockRenewalFailed !== undefined) worker.on('lockRenewalFailed', options.onLockRenewalFailed);
  return {
    queue,
    ready: async () => {
      await worker.waitUntilReady();
    },
    close: () => worker.close(),
  };
}

/** Puts a job the caller holds (lock `token`) back in its queue for another worker. */
export async function requeueJob(job: Job, token: string): Promise<void> {
  await job.moveToWait(token);
}

/** True when BullMQ keeps `job` as failed after this error: no retry follows. */
function isFinalFailure(job: Job, error: unknown): boolean {
  if (error instanceof WaitingError) return false;
  return error instanceof UnrecoverableError || job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
}

/**
 * Empties the tool arguments of a job about to be kept in BullMQ's failed set (for operators, up to a day):
 * the task already holds its outcome, and arguments may be secrets that must not outlive the execution.
 * Completed jobs are removed at once. Best effort: the failure is what matters.
 */
async function forgetArguments(job: Job): Promise<void> {
  const data: unknown = job.data;
  if (typeof data !== 'object' || data === null || !('arguments' in data)) return;
  await job.updateData({ ...data, arguments: {} }).catch(() => {});
}
