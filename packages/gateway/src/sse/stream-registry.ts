import type { SseStream } from './sse-stream.js';

/** What an open stream carries, which decides how shutdown treats it. */
export type StreamRole = 'session' | 'result' | 'direct';

/**
 * The SSE streams this process has open. On shutdown, session and tasks/result streams end at once (the
 * client reconnects to another pod; the tasks keep running), while direct calls get a grace period to finish.
 */
export class StreamRegistry {
  readonly #streams = new Map<SseStream, StreamRole>();
  readonly #cleanups = new Set<Promise<unknown>>();

  /** Tracks a stream until its connection ends. */
  add(stream: SseStream, role: StreamRole): void {
    this.#streams.set(stream, role);
    stream.signal.addEventListener('abort', () => this.#streams.delete(stream), { once: true });
  }

  /** Tracks the cleanup of a stream (giving its leases up), which shutdown waits for before closing Redis. */
  track(cleanup: Promise<unknown>): void {
    const settled = cleanup.catch(() => {});
    this.#cleanups.add(settled);
    void settled.then(() => this.#cleanups.delete(settled));
  }

  /** Resolves once every tracked cleanup has run, or after `timeoutMs`. */
  async cleanedUp(timeoutMs: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all([...this.#cleanups]), timeout]);
    clearTimeout(timer);
  }

  /** Ends every stream of the given roles now, with an SSE `retry` hint when `retryMs` is given. */
  endAll(roles: readonly StreamRole[], retryMs?: number): void {
    for (const [stream, role] of [...this.#streams]) if (roles.includes(role)) stream.end(retryMs);
  }

  /** Open streams by role (for metrics). */
  counts(): Record<StreamRole, number> {
    const counts: Record<StreamRole, number> = { session: 0, result: 0, direct: 0 };
    for (const role of this.#streams.values()) counts[role] += 1;
    return counts;
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
