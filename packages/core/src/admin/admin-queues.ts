import type { ToolCatalog } from '../catalog/tool-catalog.js';
import type { ToolQueues } from '../queues/tool-queues.js';

/** One tool queue as operators see it: jobs by state and how long the oldest waiting job has waited. */
export interface QueueStats {
  readonly queue: string;
  /** The live tools this queue runs. */
  readonly tools: string[];
  readonly waiting: number;
  readonly active: number;
  readonly delayed: number;
  readonly failed: number;
  /** Age of the oldest waiting job (ms); 0 when none waits. */
  readonly oldestWaitingMs: number;
}

/** Depth and waiting time of every queue of the live tool catalog, read from BullMQ now. */
export async function queueStats(catalog: ToolCatalog, queues: ToolQueues): Promise<QueueStats[]> {
  const byQueue = new Map<string, string[]>();
  for (const entry of await catalog.list()) {
    const tools = byQueue.get(entry.queue) ?? [];
    tools.push(entry.tool.name);
    byQueue.set(entry.queue, tools);
  }
  const now = Date.now();
  const stats = await Promise.all(
    [...byQueue].map(async ([name, tools]): Promise<QueueStats> => {
      const queue = queues.queue(name);
      const [counts, oldest] = await Promise.all([
        queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed'),
        queue.getJobs(['wait', 'prioritized'], 0, 0, true),
      ]);
      const first = oldest[0];
      return {
        queue: name,
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
