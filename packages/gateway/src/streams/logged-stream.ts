import { compareEntryIds, EventLog, type Logger, type RelayInput, type RelayReport } from '@taskgate/core';
import { LogDoubt } from './log-doubt.js';
import type { SseStream } from './sse-stream.js';
import { type FeedEvents, ordinalOf, type StreamPositions } from './stream-ids.js';
import type { StreamPart } from './stream-part.js';

/** The queue of a stream that wrote nothing yet. */
const IDLE: Promise<unknown> = Promise.resolve();

/**
 * One HTTP connection carrying a resumable SSE stream: every event goes into the stream's Redis event log
 * first (fenced by the connection lease, so a connection whose stream was resumed elsewhere writes nothing
 * more) and then onto the connection, in one queue, so the client sees the log's order. Whatever it wrote
 * can be replayed from the log on any pod after `Last-Event-ID`.
 *
 * A session's GET stream (constructed with `positions`) writes its status notifications without logging
 * them (`status`): the session's feed holds them. Its event ids name both positions, `<streamId>_<log>_<feed>`,
 * its logged events store the feed position with them, and a replay reads the feed's status notifications
 * again between the logged events they preceded — the same events under the same ids.
 */
export class LoggedStream {
  readonly streamId: string;
  readonly connectionId: string;
  readonly sse: SseStream;
  readonly #log: EventLog;
  readonly #leaseMs: number;
  readonly #logger: Logger;
  /** Made at the first hook: most task streams have none (their carrier is a `StreamPart`). */
  #cleanups: (() => Promise<unknown>)[] | undefined;
  #heartbeats: (() => Promise<unknown>)[] | undefined;
  #part: StreamPart | undefined;
  /** Told once the connection ended and its leases were given up (see `afterClose`). */
  #afterClose: (() => void) | undefined;
  #ended: { streamEnded(): void } | undefined;
  /** Shared while nothing was queued: a waiting stream that never wrote holds no promise of its own. */
  #queue: Promise<unknown> = IDLE;
  #closed: Promise<void> | undefined;
  /** A session stream's positions, moved in queue order (so each event's id names where it stands). */
  #positions: { log: string; feed: string } | undefined;
  /** Log entry id of the last logged event this connection wrote (`0-0`: none yet). */
  #written: string;
  /** Made when a log write may have run unseen (see `LogDoubt`). */
  #doubt: LogDoubt | undefined;
  /** `finish` gave the connection lease (and the carrier lease) up. */
  #released = false;
  /** Heartbeats between two lease refreshes (1: every one), and how many are left until the next. */
  #refreshEvery = 1;
  #beatsLeft = 1;

  constructor(
    log: EventLog,
    sse: SseStream,
    ids: { readonly streamId: string; readonly connectionId: string },
    leaseMs: number,
    logger: Logger,
    positions?: StreamPositions,
  ) {
    this.#log = log;
    this.sse = sse;
    this.streamId = ids.streamId;
    this.connectionId = ids.connectionId;
    this.#leaseMs = leaseMs;
    this.#logger = logger;
    this.#positions = positions === undefined ? undefined : { ...positions };
    this.#written = positions?.log ?? '0-0';
    // Told of the end by the SSE stream (`connectionEnded`): no listener, no closure per stream.
    sse.owner = this;
    if (!sse.isOpen) void this.closed();
  }

  /** The connection ended: whoever waits on the stream is told, and the clean-up runs. */
  connectionEnded(): void {
    const ended = this.#ended;
    this.#ended = undefined;
    ended?.streamEnded();
    void this.closed();
  }

  /** Tells `waiter` (one: the request the stream answers) once the connection ends; false if it has. */
  whenEnded(waiter: { streamEnded(): void }): boolean {
    if (!this.isOpen) return false;
    this.#ended = waiter;
    return true;
  }

  /** A session stream's feed position: the last feed entry it processed (after the writes queued so far). */
  get feedPosition(): string | undefined {
    return this.#positions?.feed;
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
      const feed = this.#positions?.feed;
      const id = await this.#log.append(this.streamId, this.connectionId, data, state, feed);
      if (id === undefined) return 'fenced';
      const entryId = id.slice(this.streamId.length + 1);
      await this.#writeMissed(entryId, data);
      return this.sse.event(this.#logged(entryId), data);
    });
  }

  /**
   * A session stream: writes the status notification of feed entry `feedId` without logging it (the feed
   * holds it; a resumption reads it there again) and moves the feed position to it. False when the
   * connection is gone (a resumption sends it).
   */
  status(feedId: string, message: unknown): Promise<boolean> {
    const data = JSON.stringify(message);
    return this.#queued(async () => {
      if (!this.isOpen) return false;
      this.#moveFeed(feedId);
      return this.sse.event(this.#eventId(), data);
    });
  }

  /** A session stream: moves the feed position past an entry that needed no event of its own. */
  passFeed(feedId: string): void {
    void this.#queued(async () => this.#moveFeed(feedId));
  }

  /**
   * Ends a tasks/result or direct-call stream of a terminal task: logs `message` (its response; undefined for
   * none) with `state` and gives the connection lease and the task's carrier lease (when this stream holds
   * it) up in the same script, then writes the message and ends the connection with it. False when the client is gone (nothing logged, so a
   * resumption runs the stream on) or the stream was taken over.
   */
  finish(taskId: string, message: unknown, state: Readonly<Record<string, string>>): Promise<boolean> {
    const data = message === undefined ? undefined : JSON.stringify(message);
    return this.#step(async () => {
      const entryId = await this.#log.finish(this.streamId, this.connectionId, taskId, data, state);
      if (entryId === undefined) return 'fenced';
      this.#released = true;
      if (data === undefined || entryId === '') return true;
      await this.#writeMissed(entryId);
      return this.sse.last(this.#logged(entryId), data);
    });
  }

  /** True once `finish` gave the stream's leases up: the stream holds nothing in Redis any more. */
  get released(): boolean {
    return this.#released;
  }

  /** Sets state fields without an event (the stream ends without a response). */
  setState(state: Readonly<Record<string, string>>): Promise<boolean> {
    return this.#step(async () =>
      (await this.#log.setState(this.streamId, this.connectionId, state)) ? true : 'fenced',
    );
  }

  /** Moves one outbox entry of a task onto this stream (exactly once across streams) and writes it. */
  relay(input: RelayInput): Promise<RelayReport> {
    return this.#queued(async () => {
      if (this.#doubt?.inDoubt) await this.#writeMissed();
      const feed = this.#positions?.feed;
      const outcome = await this.#doubtful(() =>
        this.#log.relay(this.streamId, this.connectionId, {
          ...input,
          ...(feed !== undefined && { feedPosition: feed }),
        }),
      );
      if (outcome.kind === 'relayed' && outcome.entryId !== undefined && input.data !== undefined) {
        await this.#writeMissed(outcome.entryId);
        this.sse.event(this.#logged(outcome.entryId), input.data);
      }
      if (outcome.kind === 'fenced') this.#lost();
      // Taken already: by another stream (a hand-over), or by this one when ioredis sent the script again
      // after a reset cost its reply; then its event is in the log, and only this connection can write it.
      if (outcome.kind === 'stale') await this.#doubtful(() => this.#writeMissed());
      return outcome;
    });
  }

  /**
   * Writes the logged events after `entryId` again (a resumption); resolves to how many events it wrote.
   * A session stream also writes, before each logged event, the feed's status notifications it had written
   * before that event (`statuses`, up to the feed position stored with the event).
   */
  replay(entryId: string, statuses?: FeedEvents): Promise<number> {
    return this.#queued(async () => {
      let after = entryId;
      let count = 0;
      if (compareEntryIds(entryId, this.#written) > 0) this.#written = entryId;
      for (;;) {
        const events = await this.#log.readAfter(this.streamId, after, 500);
        for (const event of events) {
          const positions = this.#positions;
          if (positions !== undefined) {
            if (statuses !== undefined && event.feed !== undefined && compareEntryIds(event.feed, positions.feed) > 0) {
              count += await this.#catchUp(statuses, event.feed);
            }
            positions.log = event.entryId;
          }
          this.#written = event.entryId;
          this.sse.event(this.#eventId(event.entryId), event.data);
          count += 1;
        }
        const last = events.at(-1);
        if (last === undefined || events.length < 500) return count;
        after = last.entryId;
      }
    });
  }

  /**
   * At every heartbeat: extends the connection lease (ending the connection when another one took the
   * stream over), then runs the stream's own heartbeat work (its other leases, safety re-reads).
   */
  async heartbeat(): Promise<void> {
    if (this.#released) return;
    this.#beatsLeft -= 1;
    if (this.#beatsLeft <= 0) {
      this.#beatsLeft = this.#refreshEvery;
      // A part that extends the connection lease along with its own (a carrier) saves a script per beat.
      let held = await this.#part?.refreshConnection().catch(() => true);
      // A session stream also keeps its log and state alive while connected: its status events log nothing.
      held ??= await (this.#positions === undefined
        ? this.#log.refreshConnection(this.streamId, this.connectionId, this.#leaseMs)
        : this.#log.keepAlive(this.streamId, this.connectionId, this.#leaseMs)
      ).catch(() => true);
      if (!held) return this.#lost();
    }
    await this.#part?.heartbeat();
    for (const beat of this.#heartbeats ?? []) {
      await beat().catch((error: unknown) =>
        this.#logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'stream heartbeat failed'),
      );
    }
  }

  /**
   * Refreshes the leases at one heartbeat in `beats` only (a stream whose leases its process holds, see
   * `HeldStreams`), the first one after a random number of them, so the refreshes of streams opened together
   * spread over the period. Its other heartbeat work still runs at every one.
   */
  refreshLeasesEvery(beats: number): void {
    this.#refreshEvery = Math.max(1, Math.floor(beats));
    this.#beatsLeft = 1 + Math.floor(Math.random() * this.#refreshEvery);
  }

  /** Attaches the stream's one part (see `StreamPart`): its lease refresh, heartbeat work and clean-up. */
  attach(part: StreamPart): void {
    this.#part = part;
  }

  /** Runs `beat` at every heartbeat while the connection is open. */
  onHeartbeat(beat: () => Promise<unknown>): void {
    this.#heartbeats ??= [];
    this.#heartbeats.push(beat);
  }

  /** True while this connection holds the stream (no resumption took it over). */
  holds(): Promise<boolean> {
    return this.#log.holdsConnection(this.streamId, this.connectionId);
  }

  /** Runs `cleanup` when the connection ends, before the connection lease is given up (in registration order). */
  onClose(cleanup: () => Promise<unknown>): void {
    this.#cleanups ??= [];
    this.#cleanups.push(cleanup);
  }

  /**
   * Calls `done` once the connection ended and gave its leases up (a callback, not a promise held by every
   * waiting stream from its start). Set once.
   */
  afterClose(done: () => void): void {
    this.#afterClose = done;
  }

  /** Ends the connection from this side, with a `retry` hint when the stream is not over. */
  end(retryMs?: number): void {
    this.sse.end(retryMs);
  }

  /** Resolves once the connection ended and its cleanups ran. */
  closed(): Promise<void> {
    this.#closed ??= (async () => {
      if (this.isOpen) {
        await new Promise((resolve) => this.signal.addEventListener('abort', resolve, { once: true }));
      }
      await this.#queue;
      const warn = (error: unknown): void =>
        this.#logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'stream cleanup failed');
      await this.#part?.close().catch(warn);
      for (const cleanup of this.#cleanups?.splice(0) ?? []) await cleanup().catch(warn);
      if (!this.#released) await this.#log.releaseConnection(this.streamId, this.connectionId).catch(() => {});
      const done = this.#afterClose;
      this.#afterClose = undefined;
      done?.();
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
      if (this.#doubt?.inDoubt) await this.#writeMissed();
      const written = await this.#doubtful(write);
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

  /** Writes the feed's status notifications up to `upTo` during a replay, and moves the feed position there. */
  async #catchUp(statuses: FeedEvents, upTo: string): Promise<number> {
    const positions = this.#positions;
    if (positions === undefined) return 0;
    const events = await statuses(positions.feed, upTo);
    for (const event of events) {
      this.#moveFeed(event.feedId);
      this.sse.event(this.#eventId(), event.data);
    }
    this.#moveFeed(upTo);
    return events.length;
  }

  /** Moves a session stream's feed position forward (never back). */
  #moveFeed(feedId: string): void {
    const positions = this.#positions;
    if (positions === undefined) throw new Error('only a session stream has a feed position');
    if (compareEntryIds(feedId, positions.feed) > 0) positions.feed = feedId;
  }

  /**
   * Writes the logged events after the last one this connection wrote (only it logs while it holds the stream):
   * all (in doubt, see `LogDoubt`), or, on a task stream, those before `upTo` when its ordinal (`<ms>-<n>`) is
   * more than one past the last one written; one with `data` is `upTo`'s append logged twice (sent again).
   */
  async #writeMissed(upTo?: string, data?: string): Promise<void> {
    const gap = upTo === undefined || (this.#positions === undefined && ordinalOf(upTo) > ordinalOf(this.#written) + 1);
    if (!gap) return;
    for (;;) {
      const missed = await this.#log.readAfter(this.streamId, this.#written, 500);
      for (const event of missed) {
        if (upTo !== undefined && compareEntryIds(event.entryId, upTo) >= 0) return;
        const id = this.#logged(event.entryId);
        if (event.data !== data) this.sse.event(id, event.data);
      }
      if (missed.length < 500) break;
    }
    if (upTo === undefined) this.#doubt?.clear();
  }

  /** Runs a log write; when it fails, its outcome is unknown, and the stream is in doubt (see `LogDoubt`). */
  async #doubtful<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      this.#doubt ??= new LogDoubt(
        () => this.#queued(() => this.#writeMissed()),
        () => this.isOpen,
      );
      this.#doubt.raise();
      throw error;
    }
  }

  /** The id of an event just logged as `entryId` (a session stream's log position moves to it). */
  #logged(entryId: string): string {
    if (compareEntryIds(entryId, this.#written) > 0) this.#written = entryId;
    if (this.#positions !== undefined) this.#positions.log = entryId;
    return this.#eventId(entryId);
  }

  /** The id of an event at log entry `entryId` (default: a session stream's current one), at the current feed position. */
  #eventId(entryId = this.#positions?.log ?? '0-0'): string {
    return EventLog.eventId(this.streamId, entryId, this.#positions?.feed);
  }

  /** Another connection took the stream over (a resumption elsewhere): this one just stops. */
  #lost(): void {
    this.#logger.debug({ stream: this.streamId }, 'stream taken over by another connection');
    this.sse.end();
  }
}
