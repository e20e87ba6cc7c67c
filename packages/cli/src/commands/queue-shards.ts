import { MAX_QUEUE_SHARDS, shardQueues } from '@taskgate/core';
import { ConfigError } from '../config.js';

/**
 * `taskgate queue-shards <queue> <N>`: prints the BullMQ queue of each of the N shards, one a line, shard 0
 * first: what a KEDA trigger per shard (the chart's `worker.keda.redis.queues`) or a raw BullMQ tool names.
 */
export function runQueueShards(argv: readonly string[]): number {
  const [queue, count, ...extra] = argv;
  const shards = Number(count);
  const problems: string[] = [];
  if (queue === undefined || queue === '' || /[:{}]/.test(queue)) {
    problems.push('queue: give the tool queue, e.g. tool.search (no ":", "{" or "}")');
  }
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_QUEUE_SHARDS) {
    problems.push(`N: a whole number from 1 to ${MAX_QUEUE_SHARDS}, got ${count ?? 'nothing'}`);
  }
  if (extra.length > 0) problems.push(`unexpected arguments: ${extra.join(' ')}`);
  if (problems.length > 0) throw new ConfigError(problems);
  process.stdout.write(`${shardQueues(queue as string, shards).join('\n')}\n`);
  return 0;
}
