import { type AmqpHandOffs, errorMessage, type Logger } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { ChannelModel, ConsumeMessage } from 'amqplib';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import type { AmqpToolConfig } from '../config.js';
import { replyResult } from './amqp-message.js';
import type { AmqpConnection } from './connection.js';

/** Replies handled at once by one bridge on one connection (unacknowledged deliveries). */
const PREFETCH = 32;

export interface ReplyConsumerOptions {
  readonly connection: AmqpConnection;
  /** The durable reply queue, shared by every replica of the bridge. */
  readonly queue: string;
  /** The `amqp:` tools whose requests go out on this connection, by name. */
  readonly tools: ReadonlyMap<string, AmqpToolConfig>;
  readonly handOffs: AmqpHandOffs;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  readonly logger: Logger;
}

/**
 * Consumes the durable reply queue of one AMQP connection (declared on every connect), whichever replica sent the
 * request: a reply whose `correlation_id` is a working task of one of the tools finishes it (the task store refuses
 * a second finish, so an outcome is applied once across replicas and redeliveries); a reply to a task that ended
 * (cancelled, timed out, answered) is acknowledged and discarded; one to an id taskgate never sent is dropped and
 * counted. A reply is acknowledged only after it was applied: a bridge killed meanwhile leaves it to another.
 */
export class ReplyConsumer {
  readonly #options: ReplyConsumerOptions;
  /** Executions of this process waiting for their task's reply, by task id. */
  readonly #waiting = new Map<string, (result: CallToolResult) => void>();

  constructor(options: ReplyConsumerOptions) {
    this.#options = options;
  }

  /** Declares the reply queue and consumes it (run on every connect of the connection). */
  readonly setup = async (connection: ChannelModel): Promise<void> => {
    const channel = await connection.createChannel();
    channel.on('error', (error: Error) =>
      this.#options.logger.warn({ queue: this.#options.queue, err: error.message }, 'amqp reply channel error'),
    );
    await channel.assertQueue(this.#options.queue, { durable: true });
    await channel.prefetch(PREFETCH);
    await channel.consume(this.#options.queue, (message) => {
      if (message === null) return;
      void this.#handle(message).then(
        () => channel.ack(message),
        (error: unknown) => {
          // taskgate's Redis is unreachable: the reply goes back to the queue, for this bridge or another.
          this.#options.logger.warn({ err: errorMessage(error) }, 'could not apply an amqp reply; requeued');
          setTimeout(() => {
            try {
              channel.nack(message, false, true);
            } catch {
              // The channel closed: the broker redelivers the reply anyway.
            }
          }, 1000).unref();
        },
      );
    });
  };

  /** Calls `onReply` with the result when this process applies the task's reply; returns the function to stop. */
  wait(taskId: string, onReply: (result: CallToolResult) => void): () => void {
    this.#waiting.set(taskId, onReply);
    return () => {
      if (this.#waiting.get(taskId) === onReply) this.#waiting.delete(taskId);
    };
  }

  async #handle(message: ConsumeMessage): Promise<void> {
    const { handOffs, applier, metrics, tools, logger } = this.#options;
    const taskId = message.properties.correlationId;
    if (typeof taskId !== 'string' || taskId === '' || (await handOffs.read(taskId)) === undefined) {
      metrics.amqpUnknownReplies.inc({ connection: this.#options.connection.name });
      logger.info({ connection: this.#options.connection.name }, 'amqp reply to an unknown id dropped');
      return;
    }
    const task = await applier.working(taskId, tools);
    if (task === undefined) {
      const name = await applier.toolOf(taskId);
      const tool = name !== undefined && tools.has(name) ? name : '';
      metrics.amqpLateReplies.inc({ tool });
      logger.info({ taskId, tool }, 'amqp reply to an ended task discarded');
      return;
    }
    const result = replyResult(task.tool, message.content, message.properties.contentType);
    if (await applier.finish(task.ref, task.tool, result)) {
      metrics.amqpReplies.inc({ tool: task.tool.name });
      this.#waiting.get(taskId)?.(result);
    } else {
      metrics.amqpLateReplies.inc({ tool: task.tool.name });
    }
  }
}
