import type { Redis } from 'ioredis';
import { createRedisConnection } from '../redis/connection.js';
import { closeRedis } from '../redis/redis-close.js';

/** kombu's Redis transport: a message of priority p goes to the list of the highest step <= p. */
const PRIORITY_STEPS = [0, 3, 6, 9] as const;
/** kombu's separator in priority list names and binding entries. */
const SEP = '\x06\x16';
/** Messages read per LRANGE when looking for one in a queue. */
const SCAN_PAGE = 1000;

/** Where a message of a Celery task sits in the broker: its list and its exact payload (for LREM). */
export interface QueuedCeleryMessage {
  readonly list: string;
  readonly payload: string;
}

/** The list kombu's Redis transport keeps a queue's messages of `priority` in (`celery`, `celery\x06\x163`...). */
export function celeryQueueList(queue: string, priority: number): string {
  let step: number = PRIORITY_STEPS[0];
  for (const candidate of PRIORITY_STEPS) if (candidate <= priority) step = candidate;
  return step === 0 ? queue : `${queue}${SEP}${step}`;
}

/** The database number of a redis:// URL (kombu names its broadcast channels after it). */
function databaseOf(url: string): number {
  const path = new URL(url).pathname.replace(/^\//, '');
  const db = Number.parseInt(path === '' ? '0' : path, 10);
  return Number.isFinite(db) ? db : 0;
}

/**
 * A Celery broker on Redis, spoken as kombu's Redis transport does: a queue is a list per priority step, a
 * message is LPUSHed and workers BRPOP it; bindings are sets `_kombu.binding.<exchange>`; a broadcast (the
 * workers' control channel) is a PUBLISH on `/<db>.<exchange>`. Celery's workers are never touched.
 */
export class CeleryBroker {
  readonly #redis: Redis;
  readonly #db: number;

  constructor(url: string, onError: (error: Error) => void) {
    this.#redis = createRedisConnection(url, 'command', onError);
    this.#db = databaseOf(url);
  }

  /**
   * Puts one message in `queue` at `priority`, declaring the queue's binding to its direct exchange as a
   * kombu producer does (so producers that route through the exchange find the queue too).
   */
  async send(queue: string, priority: number, payload: string): Promise<void> {
    const member = `${queue}${SEP}${SEP}${queue}`;
    const replies = await this.#redis
      .pipeline()
      .sadd(`_kombu.binding.${queue}`, member)
      .sadd(`_kombu.binding_permanent.${queue}`, member)
      .lpush(celeryQueueList(queue, priority), payload)
      .exec();
    const failed = replies?.find(([error]) => error !== null)?.[0];
    if (failed) throw failed;
  }

  /** The message of task `taskId` while it waits in `queue` (any priority), undefined once a worker took it. */
  async find(queue: string, taskId: string): Promise<QueuedCeleryMessage | undefined> {
    for (const step of PRIORITY_STEPS) {
      const list = celeryQueueList(queue, step);
      for (let start = 0; ; start += SCAN_PAGE) {
        const page = await this.#redis.lrange(list, start, start + SCAN_PAGE - 1);
        const payload = page.find((item) => item.includes(taskId) && idOf(item) === taskId);
        if (payload !== undefined) return { list, payload };
        if (page.length < SCAN_PAGE) break;
      }
    }
    return undefined;
  }

  /** Takes the message of task `taskId` out of `queue` if no worker took it yet; true when it was removed. */
  async withdraw(queue: string, taskId: string): Promise<boolean> {
    const found = await this.find(queue, taskId);
    return found !== undefined && (await this.#redis.lrem(found.list, 1, found.payload)) > 0;
  }

  /** Publishes a message to every worker listening on the fanout `exchange` (`celery.pidbox`: control). */
  async broadcast(exchange: string, payload: string): Promise<void> {
    await this.#redis.publish(`/${this.#db}.${exchange}`, payload);
  }

  async close(): Promise<void> {
    await closeRedis(this.#redis);
  }
}

/** The task id a kombu message carries (`headers.id`, message protocol v2); undefined when it has none. */
function idOf(payload: string): string | undefined {
  try {
    const message = JSON.parse(payload) as { headers?: { id?: unknown } };
    return typeof message.headers?.id === 'string' ? message.headers.id : undefined;
  } catch {
    return undefined;
  }
}
