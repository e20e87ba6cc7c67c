import type { CeleryAmqpLink } from './celery-amqp-link.js';
import { type CeleryTaskParts, revokeParts } from './celery-message.js';
import type { CeleryTransport } from './celery-transport.js';

/** Celery's control exchange: a fanout every worker's pidbox queue is bound to. */
const PIDBOX = 'celery.pidbox';
/** How long one look at a queue's consumers answers for (ms). */
const CHECK_TTL_MS = 1_000;

const json = (value: unknown): Buffer => Buffer.from(JSON.stringify(value), 'utf8');

/**
 * A Celery broker on RabbitMQ, spoken as kombu's AMQP transport (py-amqp) does with Celery's defaults: the
 * task queue is durable, bound to the direct exchange of its name with its name as routing key, and a task
 * message goes through the default exchange to the queue's name (as `send_task` does for a direct queue),
 * persistent, with its priority; the bridge counts it handed off once RabbitMQ confirmed it. A queue that
 * exists already (its workers declared it, maybe with arguments of their own) is left as it is.
 */
export class AmqpCeleryTransport implements CeleryTransport {
  readonly amqp = true;
  readonly #link: CeleryAmqpLink;
  readonly #queueArguments: ReadonlyMap<string, Record<string, unknown> | undefined>;
  readonly #checks = new Map<string, { readonly at: number; readonly count: Promise<number | undefined> }>();

  /** `queueArguments`: per queue, the arguments to declare it with when the bridge declares it first. */
  constructor(link: CeleryAmqpLink, queueArguments: ReadonlyMap<string, Record<string, unknown> | undefined>) {
    this.#link = link;
    this.#queueArguments = queueArguments;
  }

  /** Declares the Celery queue (and its exchange and binding) as a Celery worker would, unless it exists. */
  async #declare(queue: string): Promise<void> {
    const link = this.#link;
    if (link.declared.has(queue)) return;
    const exists = await link
      .passive((channel) => channel.checkQueue(queue))
      .then(
        () => true,
        () => false,
      );
    if (!exists) {
      const args = this.#queueArguments.get(queue);
      await link.declare(async (channel) => {
        await channel.assertExchange(queue, 'direct', { durable: true, autoDelete: false });
        await channel.assertQueue(queue, { durable: true, autoDelete: false, ...(args && { arguments: args }) });
        await channel.bindQueue(queue, queue, queue);
      });
    }
    link.declared.add(queue);
  }

  async send(queue: string, parts: CeleryTaskParts): Promise<void> {
    await this.#declare(queue);
    const { headers, body, properties } = parts;
    const outcome = await this.#link.publish('', queue, json(body), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers,
      deliveryMode: properties.delivery_mode,
      priority: properties.priority,
      correlationId: properties.correlation_id,
      ...(properties.reply_to !== '' && { replyTo: properties.reply_to }),
      ...(properties.expiration !== undefined && { expiration: properties.expiration }),
    });
    if (outcome === 'unroutable') {
      // The queue was deleted since it was declared: declared again at the next try.
      this.#link.declared.delete(queue);
      throw new Error(`RabbitMQ routed the message to no queue (queue '${queue}' is gone)`);
    }
  }

  /** RabbitMQ cannot look into a queue for one message. */
  async waits(): Promise<undefined> {
    return undefined;
  }

  /**
   * Rejects while RabbitMQ cannot be reached; undefined when the queue does not exist (yet). One check per
   * queue serves every task that asks within CHECK_TTL_MS.
   */
  consumers(queue: string): Promise<number | undefined> {
    const cached = this.#checks.get(queue);
    if (cached !== undefined && Date.now() - cached.at < CHECK_TTL_MS) return cached.count;
    const count = (async () => {
      await this.#link.connected();
      this.#link.model();
      const found = await this.#link.passive((channel) => channel.checkQueue(queue)).catch(() => undefined);
      return found?.consumerCount;
    })();
    count.catch(() => {});
    this.#checks.set(queue, { at: Date.now(), count });
    return count;
  }

  /** RabbitMQ cannot take one message out of a queue: a queued task is revoked instead. */
  async withdraw(): Promise<boolean> {
    return false;
  }

  /**
   * `app.control.revoke(task_id, terminate=...)` as kombu's pidbox publishes it on AMQP: a transient message
   * on the fanout `celery.pidbox` (declared as kombu declares it: not durable), every running worker's
   * pidbox queue gets it; no reply is asked for. 'unheard' when no worker runs (no queue is bound to it).
   */
  async revoke(taskId: string, terminate: boolean): Promise<'sent' | 'unheard'> {
    const link = this.#link;
    if (!link.declared.has(PIDBOX)) {
      await link.declare((channel) => channel.assertExchange(PIDBOX, 'fanout', { durable: false, autoDelete: false }));
      link.declared.add(PIDBOX);
    }
    const { body, headers } = revokeParts(taskId, terminate, Date.now());
    const outcome = await link.publish(PIDBOX, '', json(body), {
      contentType: 'application/json',
      contentEncoding: 'utf-8',
      headers,
      deliveryMode: 1,
    });
    return outcome === 'routed' ? 'sent' : 'unheard';
  }

  /** The connection is the bridge's (closed with it). */
  async close(): Promise<void> {}
}
