import { EventEmitter } from 'node:events';
import { errorMessage, type Logger, noopLogger } from '@taskgate/core';
import { type ChannelModel, type ConfirmChannel, connect, type Options } from 'amqplib';

/** What a publish came to: the broker took it (routed to a queue), or no queue was bound to its routing key. */
export type PublishOutcome = 'routed' | 'unroutable';

/** Runs on every (re)connection: declares what the bridge needs and starts its consumers, on channels of its own. */
export type AmqpSetup = (connection: ChannelModel) => Promise<void>;

export interface AmqpConnectionOptions {
  /** The connection's name in the bridge config (for logs and status messages; never the url). */
  readonly name: string;
  readonly url: string;
  readonly logger?: Logger;
  /** First wait before reconnecting (ms, default 250); doubles up to `maxBackoffMs`. */
  readonly minBackoffMs?: number;
  /** Longest wait between reconnection attempts (ms, default 5000). */
  readonly maxBackoffMs?: number;
}

/** The broker refused the publish outright (e.g. the exchange does not exist): the channel closed with this code. */
export class AmqpPublishError extends Error {
  constructor(
    message: string,
    readonly code: number | undefined,
  ) {
    super(message);
    this.name = 'AmqpPublishError';
  }
}

interface Live {
  readonly connection: ChannelModel;
  /** The confirm channel for publishing (opened again after the broker closed it). */
  channel: Promise<ConfirmChannel> | undefined;
  /** The connection closed (perhaps while the setups ran). */
  closed: boolean;
  /** Message ids the broker returned as unroutable on the current channel, until their confirm arrives. */
  readonly returned: Set<string>;
}

/**
 * One AMQP 0-9-1 connection of the bridge: connects, runs the setups (queue declarations, consumers), offers one
 * confirm channel for publishing, and reconnects by itself with backoff whenever the connection drops (a
 * restarted broker, a network cut). Emits `connected` and `disconnected` (with the error).
 */
export class AmqpConnection extends EventEmitter<{ connected: []; disconnected: [error: Error] }> {
  readonly name: string;
  readonly #url: string;
  readonly #logger: Logger;
  readonly #minBackoffMs: number;
  readonly #maxBackoffMs: number;
  readonly #setups: AmqpSetup[] = [];
  #live: Live | undefined;
  #closed = false;
  #started = false;
  #lastError: Error | undefined;
  #waiters: (() => void)[] = [];
  #timer: NodeJS.Timeout | undefined;

  constructor(options: AmqpConnectionOptions) {
    super();
    // Every execution waiting on the connection listens for its events.
    this.setMaxListeners(0);
    this.name = options.name;
    this.#url = options.url;
    this.#logger = options.logger ?? noopLogger;
    this.#minBackoffMs = options.minBackoffMs ?? 250;
    this.#maxBackoffMs = options.maxBackoffMs ?? 5000;
  }

  /** Whether the connection is up and its setups ran. */
  get connected(): boolean {
    return this.#live !== undefined;
  }

  /** Why the connection is down (the last error), while it is. */
  get lastError(): Error | undefined {
    return this.#live === undefined ? this.#lastError : undefined;
  }

  /** Adds a setup, run now if connected and on every reconnection; call before `start` to have it run first. */
  async addSetup(setup: AmqpSetup): Promise<void> {
    this.#setups.push(setup);
    if (this.#live !== undefined) await setup(this.#live.connection);
  }

  /** Connects (again and again, with backoff, until `close`). */
  start(): void {
    if (this.#started) return;
    this.#started = true;
    void this.#connect(0);
  }

  /** Resolves once connected (at once when connected); rejects when `signal` aborts or the connection closes. */
  whenConnected(signal?: AbortSignal): Promise<void> {
    if (this.#live !== undefined) return Promise.resolve();
    if (this.#closed) return Promise.reject(new Error(`AMQP connection '${this.name}' is closed`));
    return new Promise((resolve, reject) => {
      const onAbort = (): void => {
        this.#waiters = this.#waiters.filter((waiter) => waiter !== done);
        reject(signal?.reason ?? new Error('aborted'));
      };
      const done = (): void => {
        signal?.removeEventListener('abort', onAbort);
        if (this.#closed) reject(new Error(`AMQP connection '${this.name}' is closed`));
        else resolve();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiters.push(done);
    });
  }

  /**
   * Publishes one message with `mandatory` on the confirm channel and waits for the broker's confirm: 'routed'
   * when a queue took it, 'unroutable' when the broker returned it. `options.messageId` must be set (it ties the
   * return to the publish). Rejects when not connected, when the broker nacks, or with AmqpPublishError when the
   * broker closed the channel over it (a missing exchange).
   */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish & { messageId: string },
  ): Promise<PublishOutcome> {
    const live = this.#live;
    if (live === undefined) throw new Error(`AMQP connection '${this.name}' is down`);
    const channel = await (live.channel ?? this.#openChannel(live));
    return await new Promise<PublishOutcome>((resolve, reject) => {
      const onClose = (error?: Error): void => {
        const code = (error as { code?: number } | undefined)?.code;
        reject(new AmqpPublishError(error?.message ?? 'the channel closed before the broker confirmed', code));
      };
      channel.once('close', onClose);
      channel.once('error', onClose);
      channel.publish(exchange, routingKey, content, { ...options, mandatory: true }, (error) => {
        channel.off('close', onClose);
        channel.off('error', onClose);
        const returned = live.returned.delete(options.messageId);
        if (error !== null && error !== undefined) reject(new Error(`the broker did not take the message (nack)`));
        else resolve(returned ? 'unroutable' : 'routed');
      });
    });
  }

  /**
   * The messages and consumers of queue `name` now, or undefined when it does not exist (checked on a channel of
   * its own: the broker closes the channel over a missing queue). Rejects when not connected.
   */
  async queueState(name: string): Promise<{ messages: number; consumers: number } | undefined> {
    const live = this.#live;
    if (live === undefined) throw new Error(`AMQP connection '${this.name}' is down`);
    const channel = await live.connection.createChannel();
    channel.on('error', () => {});
    try {
      const state = await channel.checkQueue(name);
      return { messages: state.messageCount, consumers: state.consumerCount };
    } catch (error) {
      if ((error as { code?: number }).code === 404) return undefined;
      throw error;
    } finally {
      await channel.close().catch(() => {});
    }
  }

  /** Closes the connection for good. */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#timer);
    for (const waiter of this.#waiters.splice(0)) waiter();
    const live = this.#live;
    this.#live = undefined;
    await live?.connection.close().catch(() => {});
  }

  #openChannel(live: Live): Promise<ConfirmChannel> {
    const opening = this.#createChannel(live);
    live.channel = opening;
    opening.catch(() => {
      if (live.channel === opening) live.channel = undefined;
    });
    return opening;
  }

  async #createChannel(live: Live): Promise<ConfirmChannel> {
    const channel = await live.connection.createConfirmChannel();
    // Every publish in flight waits for the channel's close.
    channel.setMaxListeners(0);
    channel.on('return', (message) => {
      const id = message.properties.messageId;
      if (typeof id === 'string') live.returned.add(id);
    });
    // A channel error (e.g. a publish to a missing exchange) closes only the channel: the next publish opens another.
    channel.on('error', (error: Error) =>
      this.#logger.warn({ connection: this.name, err: error.message }, 'amqp channel error'),
    );
    channel.on('close', () => {
      live.returned.clear();
      live.channel = undefined;
    });
    return channel;
  }

  async #connect(attempt: number): Promise<void> {
    if (this.#closed) return;
    let connection: ChannelModel | undefined;
    try {
      connection = await connect(this.#url);
      const live: Live = { connection, channel: undefined, closed: false, returned: new Set() };
      connection.on('error', (error: Error) => {
        this.#lastError = error;
      });
      connection.once('close', (error?: Error) => this.#dropped(live, error));
      await this.#openChannel(live);
      for (const setup of this.#setups) await setup(connection);
      if (this.#closed) {
        await connection.close().catch(() => {});
        return;
      }
      if (live.closed) throw this.#lastError ?? new Error('the connection closed while it was set up');
      this.#live = live;
      this.#lastError = undefined;
      this.#logger.info({ connection: this.name }, 'amqp connection up');
      this.emit('connected');
      for (const waiter of this.#waiters.splice(0)) waiter();
    } catch (error) {
      this.#lastError = error instanceof Error ? error : new Error(String(error));
      await connection?.close().catch(() => {});
      this.#retry(attempt + 1);
    }
  }

  #dropped(live: Live, error: Error | undefined): void {
    live.closed = true;
    const wasLive = this.#live === live;
    if (wasLive) this.#live = undefined;
    if (this.#closed || !wasLive) return;
    const cause = error ?? this.#lastError ?? new Error('the connection closed');
    this.#lastError = cause;
    this.#logger.warn({ connection: this.name, err: errorMessage(cause) }, 'amqp connection lost; reconnecting');
    this.emit('disconnected', cause);
    this.#retry(0);
  }

  #retry(attempt: number): void {
    if (this.#closed) return;
    const backoff = Math.min(this.#maxBackoffMs, this.#minBackoffMs * 2 ** Math.min(attempt, 16));
    const wait = backoff / 2 + Math.random() * (backoff / 2);
    this.#timer = setTimeout(() => void this.#connect(attempt), wait);
  }
}

/** The bridge's AMQP connections: one per configured AMQP connection, made on first use. */
export class AmqpConnections {
  readonly #urls: ReadonlyMap<string, string>;
  readonly #logger: Logger;
  readonly #open = new Map<string, AmqpConnection>();

  constructor(urls: ReadonlyMap<string, string>, logger: Logger = noopLogger) {
    this.#urls = urls;
    this.#logger = logger;
  }

  /** The connection named `name` in the config (not started: add setups, then `start`). */
  get(name: string): AmqpConnection {
    let connection = this.#open.get(name);
    if (connection === undefined) {
      const url = this.#urls.get(name);
      if (url === undefined) throw new Error(`no AMQP connection named '${name}'`);
      connection = new AmqpConnection({ name, url, logger: this.#logger });
      this.#open.set(name, connection);
    }
    return connection;
  }

  /** Starts every connection made so far. */
  start(): void {
    for (const connection of this.#open.values()) connection.start();
  }

  async close(): Promise<void> {
    await Promise.all(
      [...this.#open.values()].map((connection) =>
        connection
          .close()
          .catch((error: unknown) => this.#logger.warn({ err: errorMessage(error) }, 'amqp close failed')),
      ),
    );
  }
}
