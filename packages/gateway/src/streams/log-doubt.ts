/** A stream in doubt reads its log again after this long, then twice as long after each failure, up to the maximum. */
const FIRST_MS = 100;
const MAX_MS = 5000;

/**
 * Whether a logged stream may have events in its Redis log that its connection never wrote: a log write
 * failed without a reply (a connection reset after the script ran), or a relay found its own entry taken
 * (ioredis sent the script again on the next connection). Until a read of the log clears it, the stream
 * reads its log before its next step, and a timer does so too, for a stream that has no next step soon.
 */
export class LogDoubt {
  readonly #recover: () => Promise<void>;
  readonly #isOpen: () => boolean;
  #doubt = false;
  #timer: NodeJS.Timeout | undefined;

  /** `recover` reads the log and writes what it finds (queued with the stream's writes), then calls `clear`. */
  constructor(recover: () => Promise<void>, isOpen: () => boolean) {
    this.#recover = recover;
    this.#isOpen = isOpen;
  }

  get inDoubt(): boolean {
    return this.#doubt;
  }

  /** A read of the log found every event it holds written. */
  clear(): void {
    this.#doubt = false;
  }

  /** A log write failed: its outcome is unknown, and the stream is in doubt until a read clears it. */
  raise(): void {
    this.#doubt = true;
    this.#schedule(FIRST_MS);
  }

  #schedule(delayMs: number): void {
    if (this.#timer !== undefined || !this.#isOpen()) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      if (!this.#doubt || !this.#isOpen()) return;
      this.#recover().catch(() => this.#schedule(Math.min(delayMs * 2, MAX_MS)));
    }, delayMs);
    this.#timer.unref();
  }
}
