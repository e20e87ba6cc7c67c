import { EventLog, type Logger, type RelayInput, type RelayOutcome } from '@taskgate/core';
import type { SseStream } from './sse-stream.js';

/**
 * One HTTP connection carrying a resumable SSE stream: every event goes into the stream's Redis event log
 * first (fenced by the connection lease, so a connection whose stream was resumed elsewhere writes nothing
 * more) and then onto the connection, in one queue, so the client sees the log's order. Whatever it wrote
 * can be replayed from the log on any pod after `Last-Event-ID`.
 */
export class LoggedStream {
  readonly streamId: string;
  readonly connectionId: string;
  readonly sse: SseStream;
  readonly #log: EventLog;
  readonly #leaseMs: number;
  readonly #logger: Logger;
  readonly #cleanups: (() => Promise<unknown>)[] = [];
  readonly #heartbeats: (() => Promise<unknown>)[] = [];
  #queue: Promise<unknown> = Promise.resolve();
  #closed: Promise<void> | undefined;

  constructor(
    log: EventLog,
    sse: SseStream,
    ids: { readonly streamId: string; readonly connectionId: string },
    leaseMs: number,
    logger: Logger,
  ) {
    this.#log = log;
    this.sse = sse;
    this.streamId = ids.streamId;
    this.connectionId = ids.connectionId;
    this.#leaseMs = leaseMs;
    this.#logger = logger;
    sse.signal.addEventListener('abort', () => void this.closed(), { once: true });
  }

  /** Aborted when the connection ends (client gone, stream ended, or taken over by a resumption). */
  get signal(): AbortSignal {
    return this.sse.signal;
  }

  /** True while the connection is open. */
  get isOpen(): boolean {
    return this.sse.isOpen;
  }

  /** Logs a JSON-RPC message (setting `state` fields along) and writes it; false when the stream was lost. */
  emit(message: unknown, state: Readonly<Record<string, string>> = {}): Promise<boolean> {
    const data = JSON.stringify(message);
    return this.#step(async () => {
      const id = await this.#log.append(this.streamId, this.connectionId, data, state);
      return id === undefined ? 'fenced' : this.sse.event(id, data);
    });
  }

  /** Sets state fields without an event (the stream ends without a response). */
  setState(state: Readonly<Record<string, string>>): Promise<boolean> {
    return this.#step(async () =>
      (await this.#log.setState(this.streamId, this.connectionId, state)) ? true : 'fenced',
    );
  }

  /** Moves one outbox entry of a task onto this stream (exactly once across streams) and writes it. */
  relay(input: RelayInput): Promise<RelayOutcome> {
    return this.#queued(async () => {
      const outcome = await this.#log.relay(this.streamId, this.connectionId, input);
      if (outcome.kind === 'relayed' && outcome.eventId !== undefined && input.data !== undefined) {
        this.sse.event(outcome.eventId, input.data);
      }
      if (outcome.kind === 'fenced') this.#lost();
      return outcome;
    });
  }

  /** Writes the logged events after `entryId` again (a resumption); resolves to how many there were. */
  replay(entryId: string): Promise<number> {
    return this.#queued(async () => {
      let after = entryId;
      let count = 0;
      for (;;) {
        const events = await this.#log.readAfter(this.streamId, after, 500);
        for (const event of events) this.sse.event(event.id, event.data);
        count += events.length;
        const last = events.at(-1);
        if (last === undefined || events.length < 500) return count;
        after = last.id.slice(this.streamId.length + 1);
      }
    });
  }

  /**
   * At every heartbeat: extends the connection lease (ending the connection when another one took the
   * stream over), then runs the stream's own heartbeat work (its other leases, safety re-reads).
   */
  async heartbeat(): Promise<void> {
    const held = await this.#log.refreshConnection(this.streamId, this.connectionId, this.#leaseMs).catch(() => true);
    if (!held) return this.#lost();
    for (const beat of this.#heartbeats) {
      await beat().catch((error: unknown) =>
        this.#logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'stream heartbeat failed'),
      );
    }
  }

  /** Runs `beat` at every heartbeat while the connection is open. */
  onHeartbeat(beat: () => Promise<unknown>): void {
    this.#heartbeats.push(beat);
  }

  /** True while this connection holds the stream (no resumption took it over). */
  holds(): Promise<boolean> {
    return this.#log.holdsConnection(this.streamId, this.connectionId);
  }

  /** Runs `cleanup` when the connection ends, before the connection lease is given up (in registration order). */
  onClose(cleanup: () => Promise<unknown>): void {
    this.#cleanups.push(cleanup);
  }

  /** Ends the connection from this side, with a `retry` hint when the stream is not over. */
  end(retryMs?: number): void {
    this.sse.end(retryMs);
  }

  /** Resolves once the connection ended and its cleanups ran. */
  closed(): Promise<void> {
    this.#closed ??= (async () => {
      if (!this.signal.aborted) {
        await new Promise((resolve) => this.signal.addEventListener('abort', resolve, { once: true }));
      }
      await this.#queue;
      for (const cleanup of this.#cleanups.splice(0)) {
        await cleanup().catch((error: unknown) =>
          this.#logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'stream cleanup failed'),
        );
      }
      await this.#log.releaseConnection(this.streamId, this.connectionId).catch(() => {});
    })();
    return this.#closed;
  }

  /**
   * A write step: true when logged and written; false when logged but the client is gone (a resumption
   * replays it), or when the stream was taken over ('fenced': this connection is ended).
   */
  #step(write: () => Promise<boolean | 'fenced'>): Promise<boolean> {
    return this.#queued(async () => {
      if (!this.isOpen) return false;
      const written = await write();
      if (written !== 'fenced') return written;
      this.#lost();
      return false;
    });
  }

  /** Runs `work` after every earlier write, so the connection sees events in log order. */
  #queued<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(work);
    this.#queue = run.catch(() => {});
    return run;
  }

  /** Another connection took the stream over (a resumption elsewhere): this one just stops. */
  #lost(): void {
    this.#logger.debug({ stream: this.streamId }, 'stream taken over by another connection');
    this.sse.end();
  }
}

/** A new stream id and connection id. */
export function newStreamIds(): { streamId: string; connectionId: string } {
  return { streamId: EventLog.newStreamId(), connectionId: EventLog.newConnectionId() };
}
