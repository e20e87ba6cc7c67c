import { type Channel, type ChannelModel, type ConfirmChannel, connect } from 'amqplib';

/** Waits before connecting again after a failed attempt (ms), doubled up to the max. */
const RETRY_MS = 200;
const MAX_RETRY_MS = 5_000;

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

/**
 * One AMQP connection of the Celery tools, made on first use and made anew after it closes (a RabbitMQ
 * restart): a confirm channel for publishing, a channel for passive checks, and consumers kept running
 * across reconnects by `keepConsuming`.
 */
export class CeleryAmqpLink {
  readonly #url: string;
  readonly #onError: (error: Error) => void;
  #model: Promise<ChannelModel> | undefined;
  #confirm: Promise<ConfirmChannel> | undefined;
  #check: Promise<Channel> | undefined;
  /** What was declared on the current connection (a reconnect declares again). */
  declared = new Set<string>();
  #closed = false;

  constructor(url: string, onError: (error: Error) => void) {
    this.#url = url;
    this.#onError = onError;
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** The current connection, connecting when there is none; rejects when the attempt fails. */
  model(): Promise<ChannelModel> {
    if (this.#closed) return Promise.reject(new Error('The AMQP connection is closed'));
    if (this.#model === undefined) {
      const model = connect(this.#url, { clientProperties: { connection_name: 'taskgate-bridge celery' } }).then(
        (connected) => {
          connected.on('error', (error: Error) => this.#onError(error));
          connected.on('close', () => this.#forget(model));
          return connected;
        },
      );
      model.catch(() => this.#forget(model));
      this.#model = model;
    }
    return this.#model;
  }

  #forget(model: Promise<ChannelModel>): void {
    if (this.#model !== model) return;
    this.#model = undefined;
    this.#confirm = undefined;
    this.#check = undefined;
    this.declared = new Set();
  }

  /** The publishing channel (publisher confirms on), opened anew after it or its connection closed. */
  confirmChannel(): Promise<ConfirmChannel> {
    if (this.#confirm === undefined) {
      const channel = this.model().then(async (model) => {
        const opened = await model.createConfirmChannel();
        opened.on('error', (error: Error) => this.#onError(error));
        opened.on('close', () => {
          if (this.#confirm === channel) this.#confirm = undefined;
        });
        return opened;
      });
      channel.catch(() => {
        if (this.#confirm === channel) this.#confirm = undefined;
      });
      this.#confirm = channel;
    }
    return this.#confirm;
  }

  /**
   * Runs `check` on a channel kept for passive declarations: a check that fails (404: not there) closes the
   * channel in AMQP, so the next check opens another.
   */
  async passive<T>(check: (channel: Channel) => Promise<T>): Promise<T> {
    if (this.#check === undefined) {
      const channel = this.model().then(async (model) => {
        const opened = await model.createChannel();
        opened.on('error', () => {});
        opened.on('close', () => {
          if (this.#check === channel) this.#check = undefined;
        });
        return opened;
      });
      channel.catch(() => {
        if (this.#check === channel) this.#check = undefined;
      });
      this.#check = channel;
    }
    return await check(await this.#check);
  }

  /**
   * Keeps `start` consuming: it is called with a fresh channel on every (re)connection and the channel is
   * watched; when it or the connection closes, `start` is called again once connected.
   */
  keepConsuming(start: (channel: Channel) => Promise<void>): void {
    void (async () => {
      let wait = RETRY_MS;
      while (!this.#closed) {
        try {
          const model = await this.model();
          const channel = await model.createChannel();
          const closed = new Promise<void>((resolve) => channel.once('close', () => resolve()));
          channel.on('error', (error: Error) => this.#onError(error));
          await start(channel);
          wait = RETRY_MS;
          await closed;
        } catch (error) {
          this.#onError(error instanceof Error ? error : new Error(String(error)));
          await sleep(wait);
          wait = Math.min(wait * 2, MAX_RETRY_MS);
        }
      }
    })();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const model = this.#model;
    this.#model = undefined;
    if (model !== undefined) await (await model.catch(() => undefined))?.close().catch(() => {});
  }
}
