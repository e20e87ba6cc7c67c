import type { SseStream } from './sse-stream.js';

/** What an open stream carries, which decides how shutdown treats it. */
export type StreamRole = 'session' | 'result' | 'direct';

const ROLES: readonly StreamRole[] = ['session', 'result', 'direct'];

/** A tracked stream's role and heartbeat slot; one shared object per combination, none per stream. */
interface Tracked {
  readonly role: StreamRole;
  readonly slot: number;
}

export interface StreamRegistryOptions {
  /** Every open stream gets a heartbeat this often (ms). Default 15 s. */
  readonly heartbeatMs?: number;
}

/**
 * The SSE streams this process has open. On shutdown, session and tasks/result streams end at once (the
 * client reconnects to another pod; the tasks keep running), while direct calls get a grace period to finish.
 *
 * It also beats every stream's heartbeat from one timer for the whole process, not one per stream: the
 * heartbeat period is cut into slots (about a second each), a new stream joins the slot that just had its
 * turn, and each tick beats one slot. So every stream gets a heartbeat every period (the first one at most
 * one slot early), and the streams' lease refreshes stay spread over the period as with a timer each.
 */
export class StreamRegistry {
  readonly #streams = new Map<SseStream, Tracked>();
  readonly #cleanups = new Set<Promise<unknown>>();
  readonly #slots: Set<SseStream>[];
  readonly #tracked: readonly (readonly Tracked[])[];
  readonly #tickMs: number;
  #cursor = 0;
  #timer: NodeJS.Timeout | undefined;
  /** Aborted once shutdown ended the tasks/result streams (see `closing`). */
  readonly #closing = new AbortController();
  #closingRetryMs: number | undefined;
  /** tasks/result requests still deciding between a JSON answer and a stream (see `deciding`). */
  readonly #deciding = new Set<Promise<unknown>>();
  /** Task streams (and tasks/result requests) blocked until their task ends: see `waitBegan`. */
  #waiting = 0;
  /** The one end listener every stream shares. */
  readonly #ended = (stream: SseStream): void => this.#remove(stream);

  constructor(options: StreamRegistryOptions = {}) {
    const heartbeatMs = options.heartbeatMs ?? 15_000;
    const slots = Math.min(60, Math.max(1, Math.round(heartbeatMs / 1000)));
    this.#tickMs = Math.max(1, Math.floor(heartbeatMs / slots));
    this.#slots = Array.from({ length: slots }, () => new Set<SseStream>());
    this.#tracked = ROLES.map((role) => Array.from({ length: slots }, (_v, slot) => ({ role, slot })));
  }

  /** Tracks a stream until its connection ends, and beats its heartbeat meanwhile. */
  add(stream: SseStream, role: StreamRole): void {
    if (!stream.onEnd(this.#ended)) {
      // Gone already (the client left before the response started): only its clean-up is left.
      this.#trackCleanup(stream);
      return;
    }
    const slot = this.#cursor;
    this.#streams.set(stream, this.#tracked[ROLES.indexOf(role)]?.[slot] as Tracked);
    this.#slots[slot]?.add(stream);
    if (this.#timer === undefined) {
      this.#timer = setInterval(() => this.#tick(), this.#tickMs);
      this.#timer.unref();
    }
  }

  /** A request began to wait for its task's end (a task stream set up, a tasks/result waiting in the process). */
  waitBegan(): void {
    this.#waiting += 1;
  }

  /** A wait counted by `waitBegan` ended. */
  waitEnded(): void {
    this.#waiting -= 1;
  }

  /** Requests waiting for their task's end now (the `taskgate_task_waiters` gauge). */
  get waiting(): number {
    return this.#waiting;
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

  /**
   * Aborted once shutdown ended the tasks/result streams: a tasks/result that still waits in the process opens
   * its stream at once, which `endIfClosing` ends right after its priming event (the client resumes elsewhere).
   */
  get closing(): AbortSignal {
    return this.#closing.signal;
  }

  /** Ends a tasks/result stream that opened after shutdown ended the others; true when it did. */
  endIfClosing(stream: SseStream): boolean {
    if (!this.#closing.signal.aborted) return false;
    stream.end(this.#closingRetryMs);
    return true;
  }

  /** Tracks a tasks/result that waits in the process until it answered or its stream is open (`decided`). */
  deciding(decision: Promise<unknown>): void {
    const settled = decision.catch(() => {});
    this.#deciding.add(settled);
    void settled.then(() => this.#deciding.delete(settled));
  }

  /** Resolves once every tasks/result tracked by `deciding` answered or opened its stream, or after `timeoutMs`. */
  async decided(timeoutMs: number): Promise<void> {
    if (this.#deciding.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
    });
    await Promise.race([Promise.all([...this.#deciding]), timeout]);
    clearTimeout(timer);
  }

  /** Ends every stream of the given roles now, with an SSE `retry` hint when `retryMs` is given. */
  endAll(roles: readonly StreamRole[], retryMs?: number): void {
    if (roles.includes('result') && !this.#closing.signal.aborted) {
      this.#closingRetryMs = retryMs;
      this.#closing.abort();
    }
    for (const [stream, { role }] of [...this.#streams]) if (roles.includes(role)) stream.end(retryMs);
  }

  /** Open streams by role (for metrics). */
  counts(): Record<StreamRole, number> {
    const counts: Record<StreamRole, number> = { session: 0, result: 0, direct: 0 };
    for (const { role } of this.#streams.values()) counts[role] += 1;
    return counts;
  }

  /** Resolves once every stream of `role` open now has ended, or after `timeoutMs`. */
  async settled(role: StreamRole, timeoutMs: number): Promise<void> {
    const ended = [...this.#streams]
      .filter(([, tracked]) => tracked.role === role)
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

  /** The next slot's turn: a heartbeat for each of its streams. */
  #tick(): void {
    this.#cursor = (this.#cursor + 1) % this.#slots.length;
    for (const stream of this.#slots[this.#cursor] ?? []) stream.heartbeat();
  }

  #remove(stream: SseStream): void {
    const tracked = this.#streams.get(stream);
    if (tracked === undefined) return;
    this.#streams.delete(stream);
    this.#slots[tracked.slot]?.delete(stream);
    this.#trackCleanup(stream);
    if (this.#streams.size === 0 && this.#timer !== undefined) {
      clearInterval(this.#timer);
      this.#timer = undefined;
    }
  }

  #trackCleanup(stream: SseStream): void {
    if (stream.owner !== undefined) this.track(stream.owner.closed());
  }
}
