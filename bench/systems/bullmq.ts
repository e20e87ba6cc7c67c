import { type RedisServer, startRedisServer } from '@taskgate/dev-redis';
import { Queue, QueueEvents } from 'bullmq';
import { Redis } from 'ioredis';
import type { BenchConfig } from '../lib/config.js';
import { type BenchProcess, type ProcessSet, waitForLog } from '../lib/processes.js';
import type { Subject } from './mcp-subject.js';

/** The raw BullMQ floor: a private Redis, a Worker process, and a Queue + QueueEvents in the bench process. */
export interface BullmqSystem {
  readonly redisServer: RedisServer;
  /** An admin connection (INFO). */
  readonly redis: Redis;
  readonly worker: BenchProcess;
  readonly subject: Subject;
}

/**
 * Starts the floor: what taskgate adds to BullMQ is measured against BullMQ alone, on its own Redis so the
 * command and memory counts stay separate. Jobs use BullMQ's defaults (completed jobs are kept).
 */
export async function startBullmq(config: BenchConfig, processes: ProcessSet, root: string): Promise<BullmqSystem> {
  const redisServer = await startRedisServer();
  processes.add('bullmq redis-server', () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  processes.add('bullmq admin connection', async () => void (await redis.quit().catch(() => redis.disconnect())));
  const worker = processes.spawnNode('bullmq-worker', `${root}bench/fixtures/bullmq-worker.ts`, [], {
    REDIS_URL: redisServer.url,
    BENCH_QUEUE: 'noop',
    BENCH_CONCURRENCY: String(config.concurrency),
  });
  await waitForLog(worker, /bullmq worker ready/);
  // Connection options (not instances): BullMQ opens, and on close() closes, the connections it needs.
  const connection = { host: redisServer.host, port: redisServer.port };
  const queue = new Queue('noop', { connection });
  const events = new QueueEvents('noop', { connection });
  await Promise.all([queue.waitUntilReady(), events.waitUntilReady()]);
  processes.add('bullmq producer', async () => void (await Promise.allSettled([queue.close(), events.close()])));
  const subject: Subject = {
    name: 'bullmq',
    pids: [worker.pid, redisServer.pid],
    prepare: async () => {},
    async run() {
      const job = await queue.add('noop', { arguments: {} });
      const value: unknown = await job.waitUntilFinished(events);
      if (value !== 'ok') throw new Error(`bullmq: unexpected return value ${JSON.stringify(value)}`);
    },
    close: async () => {},
  };
  return { redisServer, redis, worker, subject };
}
