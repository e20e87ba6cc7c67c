import type {
  CatalogEntry,
  StoredTask,
  TaskChange,
  TaskEnd,
  TaskFollower,
  TaskStore,
  TaskWaiter,
} from '@taskgate/core';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import type { Call, HandlerAnswer } from './context.js';

/** What an inline answer uses. */
export interface InlineAnswerServices {
  readonly tasks: TaskStore;
  readonly follower: TaskFollower;
  /** Counts the wait in `taskgate_task_waiters`. */
  readonly metrics: { waiting<T>(done: Promise<T>): Promise<T> };
  readonly options: { readonly inlineWaitMs: number };
}

/**
 * How long a task just created may be waited for before the call answers (ms; 0: not at all). Only a client of
 * the 2026-07-28 tasks extension calling an `optional` tool: there the server decides task-ness, so a task that
 * ends quickly may answer as a plain call. A `required` tool is always a task; on 2025-11-25 the client decides.
 */
export function inlineWaitOf(
  services: InlineAnswerServices,
  entry: CatalogEntry,
  ask: { readonly kind: string },
): number {
  if (ask.kind !== 'extension' || entry.tool.execution?.taskSupport !== 'optional') return 0;
  return entry.inlineWaitMs ?? services.options.inlineWaitMs;
}

/**
 * Waits up to `waitMs` for the task to end, through the process's task follower (one channel subscription per
 * task, no polling). Ended in time: its stored outcome as `tasks/result` gives it — the result with the
 * related-task `_meta` (the task stays readable by id), or its error thrown. Still running, asking for input
 * (the client answers that through `tasks/get` and `tasks/update`), or the client gone: the task as it is now.
 */
export async function inlineAnswer(
  ctx: Call<InlineAnswerServices>,
  record: StoredTask,
  waitMs: number,
  clientSignal: AbortSignal | undefined,
): Promise<HandlerAnswer> {
  const { services } = ctx;
  const { taskId } = record;
  const wait = new InlineWait(services.follower, taskId, clientSignal);
  const timer = setTimeout(() => wait.stop(), waitMs);
  try {
    const end = await services.metrics.waiting(wait.done);
    if (end?.kind === 'terminal') {
      const { task, outcome: stored } = await services.tasks.readWithOutcome(taskId);
      const ended = task ?? record;
      auditRetrieval(ctx.logger, ended);
      return { kind: 'result', result: terminalOutcome(ended, stored) };
    }
  } finally {
    clearTimeout(timer);
    wait.stop();
  }
  return { kind: 'task', task: (await services.tasks.read(taskId)) ?? record };
}

/**
 * One inline wait: the follower's waiter and its client signal's listener (`handleEvent`). The follower's
 * first read after subscribing tells it the task's status, so a request for input asked before the
 * subscription went live ends the wait too.
 */
class InlineWait implements TaskWaiter {
  readonly done: Promise<TaskEnd | undefined>;
  readonly #follower: TaskFollower;
  readonly #taskId: string;
  readonly #signal: AbortSignal | undefined;
  #resolve: (end: TaskEnd | undefined) => void = () => {};
  #over = false;

  constructor(follower: TaskFollower, taskId: string, signal: AbortSignal | undefined) {
    this.#follower = follower;
    this.#taskId = taskId;
    this.#signal = signal;
    this.done = new Promise((resolve) => {
      this.#resolve = resolve;
    });
    if (signal?.aborted === true) {
      this.#finish(undefined);
      return;
    }
    signal?.addEventListener('abort', this, { once: true });
    follower.follow(taskId, this);
  }

  taskEnded(end: TaskEnd): void {
    this.#finish(end);
  }

  /**
   * A task that asks for input ends the wait (the client answers it through `tasks/get` and `tasks/update`).
   * A change that may have gone unseen (undefined) waits on: the task as it is is read at the end anyway.
   */
  taskChanged(change: TaskChange | undefined): void {
    if (change?.task.status === 'input_required') this.stop();
  }

  /** The client went away. */
  handleEvent(): void {
    this.stop();
  }

  /** Ends the wait without the task's end (time up, input asked for, client gone); idempotent. */
  stop(): void {
    if (this.#over) return;
    this.#follower.unfollow(this.#taskId, this);
    this.#finish(undefined);
  }

  #finish(end: TaskEnd | undefined): void {
    if (this.#over) return;
    this.#over = true;
    this.#signal?.removeEventListener('abort', this);
    this.#resolve(end);
  }
}
