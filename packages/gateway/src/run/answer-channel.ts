import type { Response } from 'express';
import { SseStream } from '../streams/sse-stream.js';
import type { StreamRegistry } from '../streams/stream-registry.js';
import type { AnswerChannel, OpenStream } from '../wire/codec.js';

/**
 * The answer of one request: JSON, unless notifications go out before the response (progress, log messages
 * of a 2026-07-28 call); then an SSE stream that carries them and ends with the response.
 */
export class ResponseChannel implements AnswerChannel {
  #stream: SseStream | undefined;
  #aborted: AbortController | undefined;

  constructor(
    readonly streams: StreamRegistry,
    readonly res: Response,
  ) {}

  /** True once the answer went out, as JSON or as a stream's first bytes. */
  get started(): boolean {
    return this.#stream !== undefined || this.res.headersSent;
  }

  notify(message: Record<string, unknown>): void {
    if (this.#stream === undefined) {
      this.#stream = new SseStream(this.res);
      this.streams.add(this.#stream, 'direct');
    }
    this.#stream.send(message);
  }

  openStream(): OpenStream {
    const stream = new SseStream(this.res);
    this.streams.add(stream, 'session');
    // An error after this point can only go on the stream, as its last message.
    this.#stream = stream;
    return stream;
  }

  /** Made on first use: most requests never look. */
  get signal(): AbortSignal {
    if (this.#aborted === undefined) {
      const aborted = new AbortController();
      this.#aborted = aborted;
      this.res.once('close', () => {
        if (!this.res.writableFinished) aborted.abort();
      });
    }
    return this.#aborted.signal;
  }

  /** Sends the response (with its HTTP status while it is still JSON). */
  finish(status: number, body: Record<string, unknown>): void {
    if (this.#stream === undefined) {
      // What express's `json` sends (the same headers), in one write: a string body leaves with the headers,
      // where express's Buffer went out as a second chunk (one `writev` of two).
      const text = JSON.stringify(body);
      this.res.statusCode = status;
      this.res.setHeader('Content-Type', 'application/json; charset=utf-8');
      this.res.setHeader('Content-Length', Buffer.byteLength(text));
      this.res.end(text);
      return;
    }
    this.#stream.send(body);
    this.#stream.end();
  }
}
