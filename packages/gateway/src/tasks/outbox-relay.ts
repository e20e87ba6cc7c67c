import type { EventBus, Keys, OutboxEntry, TaskOutbox } from '@taskgate/core';

/** A running relay of one task's outbox. */
export interface OutboxRelayHandle {
  /** Delivers every entry appended so far (call it once the task is terminal, before the response). */
  drain(): Promise<void>;
  /** Stops relaying and drops the subscription. */
  stop(): Promise<void>;
}

const BATCH = 100;

/**
 * Relays a task's outbox (progress, log messages, server-to-client requests) to a stream, in order and each
 * entry once: woken by the outbox channel, re-read after a reconnect, drained on demand.
 */
export class OutboxRelay {
  readonly #bus: EventBus;
  readonly #outbox: TaskOutbox;
  readonly #keys: Keys;

  constructor(bus: EventBus, outbox: TaskOutbox, keys: Keys) {
    this.#bus = bus;
    this.#outbox = outbox;
    this.#keys = keys;
  }

  /** Starts relaying entries after `afterId` to `deliver`; resolves once the subscription is live. */
  async start(taskId: string, deliver: (entry: OutboxEntry) => void, afterId = '0'): Promise<OutboxRelayHandle> {
    let lastId = afterId;
    let stopped = false;
    let pumping: Promise<void> | undefined;
    let again = false;

    const pumpOnce = async (): Promise<void> => {
      for (;;) {
        const entries = await this.#outbox.read(taskId, lastId, BATCH);
        for (const entry of entries) {
          if (stopped) return;
          lastId = entry.id;
          deliver(entry);
        }
        if (entries.length < BATCH) return;
      }
    };
    // One read loop at a time; a wake-up during a read schedules one more pass.
    const pump = (): Promise<void> => {
      if (pumping !== undefined) {
        again = true;
        return pumping;
      }
      pumping = (async () => {
        try {
          do {
            again = false;
            await pumpOnce();
          } while (again && !stopped);
        } catch {
          // A failed read is retried at the next wake-up, reconnect or drain.
        } finally {
          pumping = undefined;
        }
      })();
      return pumping;
    };
    const wake = (): void => {
      if (!stopped) void pump();
    };

    const removeHook = this.#bus.onReconnect(wake);
    const unsubscribe = await this.#bus.subscribe(this.#keys.outboxChannel(taskId), wake).catch(() => undefined);
    wake();
    return {
      drain: async () => {
        await pumping;
        if (!stopped) await pump();
        await pumping;
      },
      stop: async () => {
        stopped = true;
        removeHook();
        await unsubscribe?.();
      },
    };
  }
}
