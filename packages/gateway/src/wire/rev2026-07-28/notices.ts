import type { TaskOutbox } from '@taskgate/core';
import type { LoggingLevel, ProgressToken } from '@taskgate/protocol';
import { outboxMessage } from '../../messages/outbox-messages.js';
import type { AnswerChannel } from '../codec.js';

/** Relays a call's progress and log messages from its outbox to the request's answer, in order. */
export class CallNotices {
  #cursor = '0';

  constructor(
    readonly answer: AnswerChannel,
    readonly outbox: TaskOutbox,
    readonly progressToken: ProgressToken | undefined,
    readonly logLevel: LoggingLevel | undefined,
  ) {}

  /** True when this request asked for anything the outbox may hold. */
  get wanted(): boolean {
    return this.progressToken !== undefined || this.logLevel !== undefined;
  }

  /** Sends what the task's outbox holds after the last entry sent. */
  async drain(taskId: string): Promise<void> {
    if (!this.wanted) return;
    for (;;) {
      const entries = await this.outbox.read(taskId, this.#cursor);
      if (entries.length === 0) return;
      for (const entry of entries) {
        this.#cursor = entry.id;
        if (entry.message.type === 'request') continue;
        if (entry.message.type === 'log' && this.logLevel === undefined) continue;
        const rendering = {
          ...(this.progressToken !== undefined && { progressToken: this.progressToken }),
          ...(this.logLevel !== undefined && { logLevel: this.logLevel }),
        };
        const message = outboxMessage(entry, rendering);
        if (message !== undefined) this.answer.notify(message);
      }
    }
  }
}
