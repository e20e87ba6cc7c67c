import { randomUUID } from 'node:crypto';
import type { Channel, ChannelModel, Options } from 'amqplib';
import type { AmqpConnection, PublishOutcome } from '../amqp/connection.js';

/** How long a publish or a check waits for the connection before it fails (ms). */
const CONNECT_WAIT_MS = 1_000;
/** Waits before opening a consumer's channel again after it alone closed (ms). */
const REOPEN_MS = 1_000;

/**
 * What the Celery tools use of one of the bridge's AMQP connections (amqp/connection.ts, which reconnects by
 * itself): confirmed publishes, declarations on the live connection, and consumers started on every
 * (re)connection.
 */
export class CeleryAmqpLink {
  readonly #connection: AmqpConnection;
  #model: ChannelModel | undefined;
  #check: Promise<Channel> | undefined;
  /** What was declared on the current connection (a reconnect declares again). */
  declared = new Set<string>();

  constructor(connection: AmqpConnection) {
    this.#connection = connection;
    void connection.addSetup(async (model) => {
      this.#model = model;
      this.#check = undefined;
      this.declared = new Set();
    });
  }

  get name(): string {
    return this.#connection.name;
  }

  /** Waits up to `ms` for the connection (a bridge that just started, a reconnect under way). */
  async connected(ms = CONNECT_WAIT_MS): Promise<void> {
    if (this.#connection.connected && this.#model !== undefined) return;
    this.#connection.start();
    await this.#connection.whenConnected(AbortSignal.timeout(ms)).catch(() => {});
  }

  /** The live connection; throws, saying why, while it is down. */
  model(): ChannelModel {
    const model = this.#model;
    if (!this.#connection.connected || model === undefined) {
      const why = this.#connection.lastError?.message;
      throw new Error(`AMQP connection '${this.name}' is down${why === undefined ? '' : ` (${why})`}`);
    }
    return model;
  }

  /** Publishes with `mandatory` and waits for RabbitMQ's confirm: 'routed' or 'unroutable'. */
  async publish(
    exchange: string,
    routingKey: string,
    content: Buffer,
    options: Options.Publish,
  ): Promise<PublishOutcome> {
    await this.connected();
    this.model();
    return await this.#connection.publish(exchange, routingKey, content, { messageId: randomUUID(), ...options });
  }

  /** Declares on a channel of its own (a refused declaration closes its channel in AMQP, nothing else). */
  async declare<T>(declare: (channel: Channel) => Promise<T>): Promise<T> {
    await this.connected();
    const channel = await this.model().createChannel();
    channel.on('error', () => {});
    try {
      return await declare(channel);
    } finally {
      await channel.close().catch(() => {});
    }
  }

  /**
   * Runs `check` on a channel kept for passive declarations: a check that fails (404: not there) closes the
   * channel in AMQP, so the next check opens another.
   */
  async passive<T>(check: (channel: Channel) => Promise<T>): Promise<T> {
    await this.connected();
    const model = this.model();
    if (this.#check === undefined) {
      const channel = model.createChannel().then((opened) => {
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
   * Keeps `start` consuming: it is called with a fresh channel on every (re)connection, and again if that
   * channel alone closes.
   */
  keepConsuming(start: (channel: Channel) => Promise<void>, onError: (error: Error) => void): void {
    const open = async (model: ChannelModel): Promise<void> => {
      const channel = await model.createChannel();
      channel.on('error', onError);
      channel.once('close', () => {
        if (this.#model !== model || !this.#connection.connected) return;
        setTimeout(() => {
          if (this.#model === model && this.#connection.connected) open(model).catch(onError);
        }, REOPEN_MS).unref();
      });
      await start(channel);
    };
    this.#connection.addSetup(open).catch(onError);
    this.#connection.start();
  }

  /** Connects (if not yet): publishes made before wait for nothing, they fail until connected. */
  start(): void {
    this.#connection.start();
  }
}
