import { type EventBus, type Keys, recordFromFields, type TaskRecord, type TaskStore } from '@taskgate/core';
import { isTerminalStatus } from '@taskgate/protocol';

/** How waiting for a task ended. */
export type WatchOutcome =
  | { readonly kind: 'terminal'; readonly task: TaskRecord }
  | { readonly kind: 'gone' }
  | { readonly kind: 'aborted' };

export interface WatchOptions {
  /** Ends the wait with `aborted` (the client went away, the gateway shuts down). */
  readonly signal: AbortSignal;
  /** Safety re-read interval (ms): pub/sub is at-most-once. */
  readonly pollMs: number;
}

/**
 * Waits for tasks to turn terminal through the process's one EventBus: subscribe to the task's channel first,
 * then re-read (so no change between the caller's read and the subscription is lost), re-read every `pollMs`
 * and after every reconnect of the subscriber. Many waiters on one task share one subscription.
 */
export class TaskWatcher {
  readonly #bus: EventBus;
  readonly #store: TaskStore;
  readonly #keys: Keys;

  constructor(bus: EventBus, store: TaskStore, keys: Keys) {
    this.#bus = bus;
    this.#store = store;
    this.#keys = keys;
  }

  /** Resolves once the task is terminal, gone (expired), or the wait was aborted. Never rejects. */
  untilTerminal(taskId: string, options: WatchOptions): Promise<WatchOutcome> {
    return new Promise<WatchOutcome>((resolve) => {
      let settled = false;
      const cleanups: (() => unknown)[] = [];
      const finish = (outcome: WatchOutcome): void => {
        if (settled) return;
        settled = true;
        for (const cleanup of cleanups) cleanup();
        resolve(outcome);
      };
      const check = (record: TaskRecord | undefined): void => {
        if (record === undefined) finish({ kind: 'gone' });
        else if (isTerminalStatus(record.status)) finish({ kind: 'terminal', task: record });
      };
      const reread = (): void => {
        if (!settled) this.#store.read(taskId).then(check, () => {});
      };
      const onMessage = (message: string): void => {
        try {
          const fields = JSON.parse(message) as Record<string, string>;
          if (fields.status !== undefined && isTerminalStatus(fields.status as TaskRecord['status'])) {
            check(recordFromFields(taskId, fields));
          }
        } catch {
          reread();
        }
      };

      if (options.signal.aborted) return finish({ kind: 'aborted' });
      const onAbort = (): void => finish({ kind: 'aborted' });
      options.signal.addEventListener('abort', onAbort, { once: true });
      cleanups.push(() => options.signal.removeEventListener('abort', onAbort));
      const timer = setInterval(reread, options.pollMs);
      timer.unref();
      cleanups.push(() => clearInterval(timer));
      cleanups.push(this.#bus.onReconnect(reread));

      this.#bus.subscribe(this.#keys.taskChannel(taskId), onMessage).then(
        (unsubscribe) => {
          if (settled) return void unsubscribe();
          cleanups.push(unsubscribe);
          reread();
        },
        // No subscription (the bus is closing): the safety re-reads still end the wait.
        () => reread(),
      );
    });
  }
}
