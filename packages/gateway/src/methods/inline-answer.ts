import type { CatalogEntry, EventBus, StoredTask, TaskStore } from '@taskgate/core';
import { auditRetrieval, terminalOutcome } from '../tasks/task-outcome.js';
import type { TaskWatcher } from '../tasks/task-watcher.js';
import type { Call, HandlerAnswer } from './context.js';

/** What an inline answer uses. */
export interface InlineAnswerServices {
  readonly tasks: TaskStore;
  readonly bus: EventBus;
  readonly watcher: TaskWatcher;
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
 * Waits up to `waitMs` for the task to end, through the process's task watcher (one channel subscription per
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
  const stop = new AbortController();
  const end = (): void => stop.abort();
  const timer = setTimeout(end, waitMs);
  clientSignal?.addEventListener('abort', end, { once: true });
  let unsubscribe: (() => Promise<void>) | undefined;
  try {
    const watched = services.metrics.waiting(services.watcher.untilTerminal(taskId, { signal: stop.signal }));
    // The same channel the watcher subscribes to (one SUBSCRIBE for both): a task that asks for input ends the
    // wait. Its status is read once the subscription is live, so a request asked before is not missed.
    unsubscribe = await services.bus
      .onTaskChange(taskId, (message) => {
        if (statusIn(message) === 'input_required') end();
      })
      .catch(() => undefined);
    if (!stop.signal.aborted) {
      const [status] = await services.tasks.statuses([taskId]);
      if (status === 'input_required') end();
    }
    const outcome = await watched;
    if (outcome.kind === 'terminal') {
      const { task, outcome: stored } = await services.tasks.readWithOutcome(taskId);
      const ended = task ?? record;
      auditRetrieval(ctx.logger, ended);
      return { kind: 'result', result: terminalOutcome(ended, stored) };
    }
  } finally {
    // Whatever ended the wait (a failed read too), the waiter goes with it.
    stop.abort();
    clearTimeout(timer);
    clientSignal?.removeEventListener('abort', end);
    await unsubscribe?.().catch(() => {});
  }
  return { kind: 'task', task: (await services.tasks.read(taskId)) ?? record };
}

/** The status a task channel message announces, if any. */
function statusIn(message: string): string | undefined {
  try {
    const fields = JSON.parse(message) as { status?: unknown };
    return typeof fields.status === 'string' ? fields.status : undefined;
  } catch {
    return undefined;
  }
}
