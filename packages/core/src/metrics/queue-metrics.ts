import type { Queue } from 'bullmq';
import type { Registry } from 'prom-client';
import { BoundedLabel, gaugeIn } from '../telemetry/metrics-registry.js';

/** The BullMQ job states the queue-depth gauge reports. */
export const QUEUE_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** Where the queues to report come from (a gateway: every queue of the catalog; a worker: its own). */
export type QueueSource = () => Promise<Iterable<Queue>>;

/** A scrape waits at most this long for Redis; a slow Redis must not make Prometheus time out. */
const COLLECT_TIMEOUT_MS = 2000;

const sources = new WeakMap<Registry, Set<QueueSource>>();

/**
 * Reports `taskgate_queue_jobs{queue,state}` on every scrape: one `getJobCounts` per queue (a few O(1)
 * Redis commands each), nothing in between. When Redis does not answer in time the last values stay and
 * `taskgate_redis_connected` tells why. Returns a function that removes the source.
 */
export function watchQueues(registry: Registry, source: QueueSource): () => void {
  let set = sources.get(registry);
  if (set === undefined) {
    const all = new Set<QueueSource>();
    set = all;
    sources.set(registry, all);
    const names = new BoundedLabel(500);
    gaugeIn(registry, {
      name: 'taskgate_queue_jobs',
      help: 'Jobs in each BullMQ queue by state (waiting, active, delayed, failed), read from Redis at scrape time.',
      labelNames: ['queue', 'state'],
      async collect() {
        let timer: NodeJS.Timeout | undefined;
        const timeout = new Promise<undefined>((resolve) => {
          timer = setTimeout(() => resolve(undefined), COLLECT_TIMEOUT_MS);
        });
        const read = (async () => {
          const queues = new Map<string, Queue>();
          for (const each of all) for (const queue of await each()) queues.set(queue.name, queue);
          const counts = await Promise.all(
            [...queues.values()].map(async (queue) => [queue.name, await queue.getJobCounts(...QUEUE_STATES)] as const),
          );
          return counts;
        })().catch(() => undefined);
        const counts = await Promise.race([read, timeout]).finally(() => clearTimeout(timer));
        if (counts === undefined) return;
        this.reset();
        for (const [queue, byState] of counts) {
          for (const state of QUEUE_STATES) this.set({ queue: names.value(queue), state }, byState[state] ?? 0);
        }
      },
    });
  }
  set.add(source);
  const mine = set;
  return () => {
    mine.delete(source);
  };
}
