import { type Logger, shardQueues, type ToolCatalog, type ToolQueues } from '@taskgate/core';
import type { QueuePlan } from './queue-plan.js';

/**
 * How long after the last worker ran a queue with an old shard count a starting worker may stop consuming the
 * old count's shards, once they are drained (default 10 minutes: longer than any gateway's catalog cache).
 */
export const DEFAULT_SHARD_RETIRE_AFTER_MS = 10 * 60_000;

/**
 * The BullMQ queues a worker consumes for one queue plan: every shard of its own count, and every shard of
 * each count the queue had before (the catalog's record) until those drain. Changing a tool's shard count on a
 * running system so loses no task: jobs a gateway put on an old shard, before or while the new count reached
 * the catalog, are still run. An old count is forgotten only when no worker ran with it for `retireAfterMs`
 * and all its shards are empty.
 */
export async function queuesToConsume(
  catalog: ToolCatalog,
  queues: ToolQueues,
  plan: QueuePlan,
  retireAfterMs: number,
  logger: Logger,
): Promise<string[]> {
  await catalog.recordShardCount(plan.queue, plan.shards);
  const names = new Set(shardQueues(plan.queue, plan.shards));
  const now = Date.now();
  for (const { shards, seenAt } of await catalog.shardCounts(plan.queue)) {
    if (shards === plan.shards || !Number.isInteger(shards) || shards < 1) continue;
    const old = shardQueues(plan.queue, shards);
    if (now - seenAt > retireAfterMs && (await Promise.all(old.map((name) => queues.isDrained(name)))).every(Boolean)) {
      await catalog.forgetShardCount(plan.queue, shards);
      logger.info({ queue: plan.queue, shards }, 'drained shards of an old shard count retired');
      continue;
    }
    for (const name of old) names.add(name);
  }
  return [...names];
}
