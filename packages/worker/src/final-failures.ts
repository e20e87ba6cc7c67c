import { errorMessage, type Logger, type TaskRef, type TaskStore } from '@taskgate/core';
import { toolError } from './outcome.js';

const FIRST_RETRY_MS = 250;
const MAX_RETRY_MS = 5000;
const FAILED = toolError('The worker could not run the tool to completion');

/** How failing a task ended: written, refused (the task had ended or expired), or given up (the worker closed). */
export type FinalFailure = 'failed' | 'ended' | 'given up';

/**
 * Fails the tasks of jobs BullMQ failed for good without an outcome stored by `runJob`: Redis did not answer
 * while the job ran (its read or its finish was not written; a failover under way, say). The job is gone, so
 * a task left `working` would never end. Redis may still be away when BullMQ gives up: the failure is written
 * again, 250 ms and then twice as long (at most 5 s) after each try, until it is written, refused or the
 * worker closes.
 */
export class FinalFailures {
  readonly #store: TaskStore;
  readonly #logger: Logger;
  /** The waits before the next try, each ended early by `close`. */
  readonly #waits = new Map<NodeJS.Timeout, () => void>();
  #pending = 0;
  #closed = false;

  constructor(store: TaskStore, logger: Logger) {
    this.#store = store;
    this.#logger = logger;
  }

  /** Tasks whose failure is not written yet. */
  get pending(): number {
    return this.#pending;
  }

  /** Fails the task, trying again while Redis does not answer; resolves with how it ended. */
  async fail(ref: TaskRef, cause: string): Promise<FinalFailure> {
    this.#pending += 1;
    try {
      for (let delayMs = FIRST_RETRY_MS; !this.#closed; delayMs = Math.min(MAX_RETRY_MS, delayMs * 2)) {
        try {
          const ended = await this.#store.finish(ref, FAILED.outcome, FAILED.statusMessage);
          if (!ended.ok) return 'ended';
          this.#logger.warn({ taskId: ref.taskId, err: cause }, 'job failed; task failed');
          return 'failed';
        } catch (error) {
          if (this.#closed) break;
          this.#logger.warn(
            { taskId: ref.taskId, err: errorMessage(error), retryMs: delayMs },
            'could not fail task yet',
          );
          await this.#wait(delayMs);
        }
      }
      this.#logger.error({ taskId: ref.taskId, err: cause }, 'could not fail task: the worker closed');
      return 'given up';
    } finally {
      this.#pending -= 1;
    }
  }

  #wait(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.#waits.delete(timer);
        resolve();
      }, ms);
      this.#waits.set(timer, resolve);
    });
  }

  /** Stops trying (the worker closes): each task still waiting gives up at once. */
  close(): void {
    this.#closed = true;
    for (const [timer, resolve] of this.#waits) {
      clearTimeout(timer);
      resolve();
    }
    this.#waits.clear();
  }
}
