import { write as writeFile, writeSync } from 'node:fs';

/** How long to wait before writing again when the descriptor is full (a pipe whose reader lags). */
const RETRY_MS = 100;

/**
 * Log lines to a file descriptor (stdout), one write per turn of the event loop: the lines of every request
 * and job handled in that turn leave together, at the turn's end (the `setImmediate` phase), no timer, in one
 * system call on the main thread. Each line went to the thread pool before (the audit entries of every
 * task): a hand-off, a wake-up and a completion per line. A full pipe (EAGAIN) takes the rest in the
 * background (retried without blocking; lines logged meanwhile follow it); a closed one (EPIPE) ends
 * logging; what is left is written synchronously when the process exits.
 */
export class TurnBatchedLog {
  readonly #fd: number;
  #pending = '';
  #writing = false;
  #scheduled = false;
  #closed = false;

  constructor(fd: number) {
    this.#fd = fd;
  }

  write(line: string): void {
    if (this.#closed) return;
    this.#pending += line;
    this.#schedule();
  }

  #schedule(): void {
    if (this.#writing || this.#scheduled) return;
    this.#scheduled = true;
    setImmediate(this.#flush);
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (this.#writing || this.#pending === '' || this.#closed) return;
    let chunk = Buffer.from(this.#pending);
    this.#pending = '';
    // Written at once: a file or a pipe with room takes it in one system call, with no thread hand-off.
    try {
      while (chunk.length > 0) chunk = chunk.subarray(writeSync(this.#fd, chunk));
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'EAGAIN' && code !== 'EBUSY') {
        this.#close();
        return;
      }
      // A full pipe: the rest waits for room without blocking the process.
      this.#writing = true;
      this.#send(chunk);
    }
  };

  #close(): void {
    // EPIPE (the reader went away) and any other failure: logging stops, the process goes on.
    this.#closed = true;
    this.#writing = false;
    this.#pending = '';
  }

  #send(chunk: Buffer): void {
    writeFile(this.#fd, chunk, 0, chunk.length, null, (error, written) => {
      if (error !== null) {
        if (error.code === 'EAGAIN' || error.code === 'EBUSY') {
          setTimeout(() => this.#send(chunk), RETRY_MS);
          return;
        }
        this.#close();
        return;
      }
      if (written < chunk.length) {
        this.#send(chunk.subarray(written));
        return;
      }
      this.#writing = false;
      if (this.#pending !== '') this.#schedule();
    });
  }

  /** Writes what is left at once (the process is exiting); a line under way in the thread pool may be lost. */
  flushSync(): void {
    if (this.#closed || this.#pending === '') return;
    const text = this.#pending;
    this.#pending = '';
    try {
      writeSync(this.#fd, text);
    } catch {
      // Nothing more can be done on the way out.
    }
  }
}

let stdout: TurnBatchedLog | undefined;

/** The process's one batched stdout (shared by every logger of the process), flushed on exit. */
export function batchedStdout(): TurnBatchedLog {
  if (stdout === undefined) {
    const log = new TurnBatchedLog(1);
    process.once('exit', () => log.flushSync());
    stdout = log;
  }
  return stdout;
}
