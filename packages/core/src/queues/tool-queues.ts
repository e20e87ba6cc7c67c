import { type JobsOptions, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { type WaitReplicas, waitPolicyOf } from '../redis/connection.js';
import { Keys } from '../redis/keys.js';
import { awaitReplicas } from '../redis/replication.js';
import { bullmqTelemetryOption, inSpan, SpanKind, type TraceCarrier, traceCarrierOf } from '../telemetry/tracing.js';
import type { ReadJobData } from './read-jobs.js';

/** What a tool job carries. No tokens or secrets: the owner is a digest, the principal a name. */
export interface ToolJobData {
  readonly taskId: string;
  readonly ownerId: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  /** Digest of the session that created the task (`null`: none); saves the worker a read of the record. */
  readonly session?: string | null;
  /** The authenticated principal's name, when auth is on. */
  readonly principal?: string;
  /** The client's declared capabilities and implementation info, from its session. */
  readonly client?: { readonly capabilities: Record<string, unknown>; readonly info?: Record<string, unknown> };
  /** The trace context of the enqueueing span (only while tracing is on): the worker's spans join its trace. */
  readonly trace?: TraceCarrier;
}

/** How BullMQ should run one tool's jobs. */
export interface ToolJobPolicy {
  readonly queue: string;
  readonly attempts: number;
  /** Delay before a retry (ms), doubled per attempt. */
  readonly backoffMs?: number;
}

export interface ToolQueuesOptions {
  /** Connection BullMQ's queues share: a producer's (fails fast: the gateway's commands connection) or a worker's. */
  readonly connection: Redis;
  readonly keys?: Keys;
}

/**
 * The broker's side of BullMQ: one queue per tool (by default), job id = task id, so a job can always be
 * found, removed or deduplicated by its task. Completed jobs are removed at once (the task record holds
 * the outcome); failed ones are kept briefly for operators.
 */
/**
 * Removes a job of `queue` that no worker has taken yet (waiting, delayed or prioritized); true when removed.
 * BullMQ's remove() refuses a job a worker locked meanwhile, so an active job is never removed.
 */
export async function removeJobIfWaiting(queue: Queue, jobId: string): Promise<boolean> {
  const job = await queue.getJob(jobId);
  if (job === undefined) return false;
  const state = await job.getState();
  if (state !== 'waiting' && state !== 'delayed' && state !== 'prioritized') return false;
  return await job.remove().then(
    () => true,
    () => false,
  );
}

/**
 * Events a tool queue's BullMQ event stream keeps (BullMQ's default: 10,000). Nothing in taskgate reads these
 * streams — the task record and its channel carry every change — so they stay short: a few events per task
 * at 10,000 held about 350 bytes per finished task in Redis. A `QueueEvents` listener still sees every event
 * as it happens.
 */
export const QUEUE_EVENTS_KEPT = 1000;

/**
 * How long a job waits for its replicas' confirmation before it could run anyway: longer than two WAIT rounds
 * (see `awaitReplicas`) and the removal that follows a refusal, with room for a busy process.
 */
function holdMs(policy: WaitReplicas): number {
  return 4 * policy.timeoutMs + 10_000;
}

export class ToolQueues {
  readonly #queues = new Map<string, Queue>();
  readonly #connection: Redis;
  readonly #keys: Keys;

  constructor(options: ToolQueuesOptions) {
    this.#connection = options.connection;
    this.#keys = options.keys ?? new Keys();
  }

  /** The queue with this name (created on first use and kept). */
  queue(name: string): Queue {
    let queue = this.#queues.get(name);
    if (queue === undefined) {
      queue = new Queue(name, {
        connection: this.#connection,
        prefix: this.#keys.bullPrefix(name),
        streams: { events: { maxLen: QUEUE_EVENTS_KEPT } },
        ...bullmqTelemetryOption(),
      });
      this.#queues.set(name, queue);
    }
    return queue;
  }

  /**
   * Enqueues the job of a task, direct call or read; enqueuing the same task twice is a no-op (job id = task
   * id). The job's name is the tool, or the method of a read.
   */
  async enqueue(policy: ToolJobPolicy, data: ToolJobData | ReadJobData): Promise<void> {
    const options: JobsOptions = {
      jobId: data.taskId,
      attempts: Math.max(1, policy.attempts),
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600, count: 1000 },
      ...(policy.backoffMs !== undefined && { backoff: { type: 'exponential', delay: policy.backoffMs } }),
    };
    const name = 'tool' in data ? data.tool : data.read.method;
    const attributes = {
      'messaging.system': 'bullmq',
      'messaging.operation.type': 'send',
      'messaging.operation.name': 'send',
      'messaging.destination.name': policy.queue,
      'messaging.message.id': data.taskId,
      'mcp.task.id': data.taskId,
    };
    await inSpan(`send ${policy.queue}`, { kind: SpanKind.PRODUCER, attributes }, async () => {
      // The job carries the context of this span (no field while nothing traces), so the worker joins the trace.
      const carrier = traceCarrierOf();
      const job = carrier === undefined ? data : { ...data, trace: carrier };
      const replication = waitPolicyOf(this.#connection);
      if (replication === undefined) {
        await this.queue(policy.queue).add(name, job, options);
        return;
      }
      // With TASKGATE_REDIS_WAIT_REPLICAS, the task's record and its job are on replicas before it is
      // acknowledged. Until then the job is held (delayed), so no worker can take it: when the replicas do not
      // confirm, the job is removed before any worker saw it and the task never runs. Confirmed, it is
      // promoted at once; should the promotion itself be lost (the master failing just then), the job on the
      // replica still runs once its hold ends.
      const held = await this.queue(policy.queue).add(name, job, { ...options, delay: holdMs(replication) });
      try {
        await awaitReplicas(this.#connection, [this.#keys.task(data.taskId), this.#keys.queueSlotKey(policy.queue)]);
      } catch (error) {
        await held.remove().catch(() => {});
        throw error;
      }
      await held.promote().catch(() => {});
    });
  }

  /** Removes a task's job if it has not started yet (a cancelled task's job need not wait its turn). */
  async removeWaiting(queueName: string, taskId: string): Promise<boolean> {
    // A job a worker locked in the meantime stays; the worker then skips the cancelled task.
    return await removeJobIfWaiting(this.queue(queueName), taskId);
  }

  /**
   * Removes a task's job if it has not started yet, from whichever of `queueNames` (the task's shard under each
   * shard count its tool's queue has had, `queuesOfTask`) holds it.
   */
  async removeWaitingFromAny(queueNames: readonly string[], taskId: string): Promise<boolean> {
    for (const name of queueNames) if (await this.removeWaiting(name, taskId)) return true;
    return false;
  }

  /** True when no job of the queue waits, runs, is delayed or retried later: a retired shard may be left. */
  async isDrained(queueName: string): Promise<boolean> {
    // A paused queue's jobs count as waiting (BullMQ 6 has no paused state).
    const counts = await this.queue(queueName).getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return Object.values(counts).every((count) => count === 0);
  }

  /** Closes every queue this facade opened. */
  async close(): Promise<void> {
    await Promise.all([...this.#queues.values()].map((queue) => queue.close()));
    this.#queues.clear();
  }
}
