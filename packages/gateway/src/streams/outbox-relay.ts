import type { OutboxEntry, TaskDelivery, TaskOutbox } from '@taskgate/core';
import { type OutboxRendering, outboxMessage } from '../messages/outbox-messages.js';
import type { LoggedStream } from './logged-stream.js';

/** How a relay pass ended. */
export type RelayEnd = 'idle' | 'not_carrier' | 'fenced';

export interface OutboxRelayOptions {
  readonly taskId: string;
  /** `carrier`: the stream holds the task's carrier lease; `fallback`: the GET stream, while nobody does. */
  readonly mode: 'carrier' | 'fallback';
  /** The task's expiry (unix ms), which bounds its relay state. */
  readonly expiresAt: number;
  /**
   * How this stream renders `entries` of the task (asked at every pass: the log level may change; a
   * rendering needs the session's log level only when a log message is among them).
   */
  readonly rendering: (entries: readonly OutboxEntry[]) => Promise<OutboxRendering>;
  /**
   * Runs before an input request goes out on this stream (a tasks/result stream shows the task's
   * `input_required` status first); false when the stream could not take it.
   */
  readonly beforeRequest?: () => Promise<boolean>;
}

const BATCH = 100;

/**
 * Relays one task's outbox (progress, log messages, server-to-client requests) onto one logged stream, in
 * outbox order, from the task's relay cursor: each entry goes out once across all streams and pods (the
 * relayEvent script moves the cursor with the event). One pass at a time; wake-ups during a pass add one
 * more pass, so nothing appended meanwhile is left behind.
 */
export class OutboxRelay {
  readonly #outbox: TaskOutbox;
  readonly #delivery: TaskDelivery;
  readonly #stream: LoggedStream;
  readonly #options: OutboxRelayOptions;
  #running: Promise<RelayEnd> | undefined;
  #again = false;

  constructor(outbox: TaskOutbox, delivery: TaskDelivery, stream: LoggedStream, options: OutboxRelayOptions) {
    this.#outbox = outbox;
    this.#delivery = delivery;
    this.#stream = stream;
    this.#options = options;
  }

  /** True while a pass runs. */
  get busy(): boolean {
    return this.#running !== undefined;
  }

  /** Relays everything after the cursor; resolves once a pass that started after this call has ended. */
  pump(): Promise<RelayEnd> {
    if (this.#running !== undefined) {
      this.#again = true;
      return this.#running;
    }
    const running = (async (): Promise<RelayEnd> => {
      try {
        let end: RelayEnd;
        do {
          this.#again = false;
          end = await this.#pass();
        } while (this.#again && end === 'idle' && this.#stream.isOpen);
        return end;
      } finally {
        this.#running = undefined;
      }
    })();
    this.#running = running;
    return running;
  }

  async #pass(): Promise<RelayEnd> {
    const { taskId, mode, expiresAt } = this.#options;
    for (;;) {
      if (!this.#stream.isOpen) return 'fenced';
      const cursor = await this.#delivery.cursor(taskId);
      const entries = await this.#outbox.read(taskId, cursor, BATCH);
      if (entries.length === 0) return 'idle';
      const rendering = await this.#options.rendering(entries);
      for (const entry of entries) {
        const message = outboxMessage(entry, rendering);
        const requestId = requestIdOf(entry);
        if (requestId !== undefined && message !== undefined && this.#options.beforeRequest !== undefined) {
          if (!(await this.#options.beforeRequest())) return 'fenced';
        }
        const outcome = await this.#stream.relay({
          taskId,
          mode,
          entryId: entry.id,
          data: message === undefined ? undefined : JSON.stringify(message),
          expiresAt,
          ...(requestId !== undefined && { requestId }),
        });
        if (outcome.kind === 'fenced' || outcome.kind === 'not_carrier') return outcome.kind;
        // Another stream moved the cursor (a hand-over between streams): read from the cursor again.
        if (outcome.kind === 'stale') break;
      }
    }
  }
}

/** The input request id of an entry that is one. */
export function requestIdOf(entry: OutboxEntry): string | undefined {
  return entry.message.type === 'request' ? entry.message.requestId : undefined;
}
