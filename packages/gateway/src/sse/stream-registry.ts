import type { SseStream } from './sse-stream.js';

/** What an open stream carries, which decides how shutdown treats it. */
export type StreamRole = 'session' | 'result' | 'direct';

/**
 * The SSE streams this process has open. On shutdown, session and tasks/result streams end at once (the
 * client reconnects to another pod; the tasks keep running), while direct calls get a grace period to finish.
 */
export class StreamRegistry {
  readonly #streams = new Map<SseStream, StreamRole>();

  /** Tracks a stream until its connection ends. */
  add(stream: SseStream, role: StreamRole): void {
    this.#streams.set(stream, role);
    stream.signal.addEventListener('abort', () => this.#streams.delete(stream), { once: true });
  }

  /** Ends every stream of the given roles now. */
  endAll(roles: readonly StreamRole[]): void {
    for (const [stream, role] of [...this.#streams]) if (roles.includes(role)) stream.end();
  }

  /** Resolves once every stream of `role` open now has ended, or after `timeoutMs`. */
  async settled(role: StreamRole, timeoutMs: number): Promise<void> {
    const ended = [...this.#streams]
      .filter(([, r]) => r === role)
      .map(
        ([stream]) =>
          new Promise<void>((resolve) => {
            if (stream.signal.aborted) resolve();
            else stream.signal.addEventListener('abort', () => resolve(), { once: true });
          }),
      );
    if (ended.length === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all(ended), timeout]);
    clearTimeout(timer);
  }
}
