import type { CeleryBroker } from '@taskgate/core';
import { type CeleryTaskParts, revokeMessage, taskMessage } from './celery-message.js';

/** What a Celery-bridged tool needs of its broker, whether Redis (kombu's Redis transport) or AMQP (RabbitMQ). */
export interface CeleryTransport {
  /** Whether `replyTo` can name a queue for Celery's `rpc://` backend (AMQP only). */
  readonly amqp: boolean;
  /** Puts the task's message in `queue`; resolves once the broker holds it (AMQP: confirmed). */
  send(queue: string, parts: CeleryTaskParts): Promise<void>;
  /** Whether the task's message still waits in `queue`; undefined when the broker cannot tell. */
  waits(queue: string, taskId: string): Promise<boolean | undefined>;
  /** How many workers consume `queue`; undefined when the broker cannot tell. */
  consumers(queue: string): Promise<number | undefined>;
  /** Takes the task's message out of `queue` if it still waits there; true when it was removed. */
  withdraw(queue: string, taskId: string): Promise<boolean>;
  /** Broadcasts Celery's `revoke` command to every worker (`celery.pidbox`); 'unheard' when none runs (AMQP). */
  revoke(taskId: string, terminate: boolean): Promise<'sent' | 'unheard'>;
  close(): Promise<void>;
}

/** kombu's Redis transport, through core's CeleryBroker. */
export function redisTransport(broker: CeleryBroker): CeleryTransport {
  return {
    amqp: false,
    send: (queue, parts) => broker.send(queue, parts.properties.priority, taskMessage(queue, parts)),
    waits: async (queue, taskId) => (await broker.find(queue, taskId)) !== undefined,
    consumers: async () => undefined,
    withdraw: (queue, taskId) => broker.withdraw(queue, taskId),
    revoke: async (taskId, terminate) => {
      await broker.broadcast('celery.pidbox', revokeMessage(taskId, terminate, Date.now()));
      return 'sent';
    },
    close: () => broker.close(),
  };
}
