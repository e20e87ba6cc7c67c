import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface SseStreamOptions {
  /** Extra response headers. */
  readonly headers?: Readonly<Record<string, string>>;
  /**
   * The caller writes an event at once (a priming event): the headers leave in the same socket write (the
   * socket is corked until the next tick), not in one of their own.
   */
  readonly headersWithFirstEvent?: boolean;
}

/** Who runs a stream's heartbeat work and its clean-up after the connection ended (a `LoggedStream`). */
export interface SseStreamOwner {
  /** Runs at every heartbeat, after the keep-alive comment (e.g. to refresh leases); must not reject. */
  heartbeat(): Promise<unknown>;
  /** Told once, when the connection ended (whoever ended it), before the registry is. */
  connectionEnded(): void;
  /** Resolves once the clean-up after the connection's end ran (giving leases up). */
  closed(): Promise<unknown>;
}

/** Sends what a corked socket holds (the headers and the first event, in one write). */
function uncork(socket: Socket): void {
  socket.uncork();
}

/** The `reason` of every stream's signal. */
const STREAM_ENDED = new Error('The SSE stream ended');

/**
 * One Server-Sent Events response. Writes JSON-RPC messages as `message` events, keeps the connection alive
 * with comment lines, and tells its owner when the connection ends, whoever ended it.
 *
 * Event ids are the caller's: resumable streams (`LoggedStream`: a Redis event log per stream and
 * `Last-Event-ID`) log each event first and write it with `event(id, data)`, so this class stays a writer.
 * It has no timer of its own: the process's `StreamRegistry` calls `heartbeat()` of every open stream.
 */
export class SseStream {
  readonly #res: ServerResponse;
  #open = true;
  /**
   * Made when something asks for `signal`: a waiting task stream never does (an AbortController costs a
   * hidden class of its own per signal, about a kilobyte), its owner is told of the end directly.
   */
  #abort: AbortController | undefined;
  #endedByServer = false;
  /** Runs the heartbeat work and the clean-up (set once, right after construction). */
  owner: SseStreamOwner | undefined;
  /** Told once, after the connection ended (the registry that tracks the stream). */
  #onEnd: ((stream: SseStream) => void) | undefined;

  constructor(res: ServerResponse, options: SseStreamOptions = {}) {
    this.#res = res;
    res.writeHead(200, {
      'Content-Type': 'text/event-stream',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      // nginx and friends must not buffer the stream.
      'X-Accel-Buffering': 'no',
      ...options.headers,
    });
    const socket = res.socket;
    if (options.headersWithFirstEvent === true && socket !== null) {
      socket.cork();
      process.nextTick(uncork, socket);
    }
    // Flushed on their own, not prepended to the first event: Node keeps the header string for the response's
    // life, and only a string written as it is gets flattened in place; built up header by header, it is a
    // tree of about thirty concatenations (a kilobyte) that every waiting response would otherwise hold.
    res.flushHeaders();
    socket?.setNoDelay(true);
    // 'close' comes once: `on` spares the wrapper `once` makes.
    res.on('close', () => this.#closed());
    // The client may have gone before we got here, in which case 'close' fired already.
    if (res.destroyed || res.socket === null || res.socket.destroyed) this.#closed();
  }

  /** True until the connection ended. */
  get isOpen(): boolean {
    return this.#open;
  }

  /** Aborted when the connection ends: the client went away, or `end()` was called. */
  get signal(): AbortSignal {
    if (this.#abort === undefined) {
      this.#abort = new AbortController();
      if (!this.#open) this.#abort.abort(STREAM_ENDED);
    }
    return this.#abort.signal;
  }

  /**
   * One heartbeat: a keep-alive comment (idle streams survive proxies), then the owner's heartbeat work.
   * The registry calls it every `sseHeartbeatMs` while the stream is open.
   */
  heartbeat(): void {
    if (!this.isOpen) return;
    this.#write(': keep-alive\n\n');
    void this.owner?.heartbeat();
  }

  /** Calls `listener` once when the connection ends; false (and no call) when it has ended already. */
  onEnd(listener: (stream: SseStream) => void): boolean {
    if (!this.isOpen) return false;
    this.#onEnd = listener;
    return true;
  }

  /** True when this side ended the stream (as opposed to the client going away). */
  get endedByServer(): boolean {
    return this.#endedByServer;
  }

  /** Writes one JSON-RPC message as an SSE `message` event. Returns false when the stream is closed. */
  send(message: unknown, eventId?: string): boolean {
    if (!this.isOpen) return false;
    const id = eventId === undefined ? '' : `id: ${eventId}\n`;
    this.#write(`${id}event: message\ndata: ${JSON.stringify(message)}\n\n`);
    return true;
  }

  /**
   * Writes one logged event: its id and data as the event log holds them. Empty data is a priming event
   * (an id the client can resume from, nothing to dispatch); `retryMs` adds the SSE `retry` field.
   */
  event(eventId: string, data: string, retryMs?: number): boolean {
    if (!this.isOpen) return false;
    const retry = retryMs === undefined ? '' : `retry: ${Math.max(0, Math.floor(retryMs))}\n`;
    this.#write(
      data === '' ? `id: ${eventId}\n${retry}data: \n\n` : `id: ${eventId}\n${retry}event: message\ndata: ${data}\n\n`,
    );
    return true;
  }

  /**
   * Writes one event, the stream's last (the response of a tasks/result or direct call), and ends the stream
   * with it in one socket write. Without an id (a quiet stream's unlogged response), the client's last event
   * id stays the one it had. Returns false when the stream is closed.
   */
  last(eventId: string | undefined, data: string): boolean {
    if (!this.isOpen) return false;
    this.#endedByServer = true;
    this.#res.end(`${eventId === undefined ? '' : `id: ${eventId}\n`}event: message\ndata: ${data}\n\n`);
    this.#closed();
    return true;
  }

  /**
   * Ends the stream from this side. With `retryMs`, first sends the SSE `retry` field, which tells the client
   * how soon to reconnect (a draining gateway: the client resumes on another pod).
   */
  end(retryMs?: number): void {
    if (!this.isOpen) return;
    this.#endedByServer = true;
    if (retryMs !== undefined) this.#write(`retry: ${Math.max(0, Math.floor(retryMs))}\n\n`);
    this.#res.end();
    this.#closed();
  }

  #write(chunk: string): void {
    this.#res.write(chunk);
  }

  #closed(): void {
    if (!this.#open) return;
    this.#open = false;
    // A reason of our own: the default one is a DOMException, which captures a stack trace.
    this.#abort?.abort(STREAM_ENDED);
    this.owner?.connectionEnded();
    const onEnd = this.#onEnd;
    this.#onEnd = undefined;
    onEnd?.(this);
  }
}
