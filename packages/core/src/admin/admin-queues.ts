import type { CatalogEntry, ToolCatalog } from '../catalog/tool-catalog.js';
import { shardQueues } from '../queues/queue-shards.js';
import type { ToolQueues } from '../queues/tool-queues.js';

/** One tool queue as operators see it: jobs by state and how long the oldest waiting job has waited. */
export interface QueueStats {
  readonly queue: string;
  /** Which shard of its tool queue this queue is (absent: the queue has one shard). */
  readonly shard?: { readonly index: number; readonly of: number };
  /** The live tools this queue runs. */
  readonly tools: string[];
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
  /** Age of the oldest waiting job (ms); 0 when none waits. */
  readonly oldestWaitingMs: number;
}

/** The BullMQ queues of catalog entries: every shard of each entry's queue, each name once. */
export function catalogQueues(entries: readonly CatalogEntry[]): string[] {
  return [...new Set(entries.flatMap((entry) => shardQueues(entry.queue, entry.queueShards ?? 1)))];
}

/** Depth and waiting time of every queue (every shard) of the live tool catalog, read from BullMQ now. */
export async function queueStats(catalog: ToolCatalog, queues: ToolQueues): Promise<QueueStats[]> {
  const byQueue = new Map<string, { tools: string[]; shard?: { index: number; of: number } }>();
  for (const entry of await catalog.list()) {
    const shards = shardQueues(entry.queue, entry.queueShards ?? 1);
    shards.forEach((name, index) => {
      const known = byQueue.get(name) ?? {
        tools: [],
        ...(shards.length > 1 && { shard: { index, of: shards.length } }),
      };
      known.tools.push(entry.tool.name);
      byQueue.set(name, known);
    });
  }
  const now = Date.now();
  const stats = await Promise.all(
    [...byQueue].map(async ([name, { tools, shard }]): Promise<QueueStats> => {
      const queue = queues.queue(name);
      const [counts, oldest] = await Promise.all([
        queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'),
        queue.getJobs(['wait', 'prioritized'], 0, 0, true),
      ]);
      const first = oldest[0];
      return {
        queue: name,
        ...(shard !== undefined && { shard }),
        tools: tools.sort(),
        waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
        active: counts.active ?? 0,
        delayed: counts.delayed ?? 0,
        failed: counts.failed ?? 0,
        oldestWaitingMs: first === undefined ? 0 : Math.max(0, now - first.timestamp),
      };
    }),
  );
  return stats.sort((a, b) => (a.queue < b.queue ? -1 : 1));
}
