import type { TaskOutbox } from '@taskgate/core';
import type { LoggingLevel, ProgressToken } from '@taskgate/protocol';
import type { Response } from 'express';
import { outboxMessage } from '../../messages/outbox-messages.js';
import { SseStream } from '../../streams/sse-stream.js';
import type { StreamRegistry } from '../../streams/stream-registry.js';

/**
 * The answer of one stateless request: JSON, unless notifications go out before the result (progress for a
 * request with a `progressToken`, log messages at the `_meta` logLevel); then an SSE stream that carries them
 * and ends with the response. No server-to-client request ever goes on it (input requests are results).
 */
export class StatelessAnswer {
  #stream: SseStream | undefined;

  constructor(
    readonly services: { readonly streams: StreamRegistry; readonly outbox: TaskOutbox },
    readonly res: Response,
  ) {}

  /** Sends a notification, turning the answer into an SSE stream first. */
  notify(message: Record<string, unknown>): void {
    if (this.#stream === undefined) {
      this.#stream = new SseStream(this.res);
      this.services.streams.add(this.#stream, 'direct');
    }
    this.#stream.send(message);
  }

  /** Sends the response (with its HTTP status when it is still JSON). */
  finish(status: number, body: Record<string, unknown>): void {
    if (this.#stream === undefined) {
      this.res.status(status).json(body);
      return;
    }
    this.#stream.send(body);
    this.#stream.end();
  }
}

/** Relays a call's progress and log messages from its outbox to the request's answer, in order. */
export class CallNotices {
  #cursor = '0';

  constructor(
    readonly answer: StatelessAnswer,
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
      const entries = await this.answer.services.outbox.read(taskId, this.#cursor);
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
