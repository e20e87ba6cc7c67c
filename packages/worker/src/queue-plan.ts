import { MAX_QUEUE_SHARDS, TaskgateError } from '@taskgate/core';
import type { AnyToolDefinition, RateLimit } from './define-tool.js';

/** One BullMQ worker to start: a queue and the options BullMQ applies to the whole queue. */
export interface QueuePlan {
  readonly queue: string;
  /** Shards of the queue (its tools' `queueShards`, else the worker's default). */
  readonly shards: number;
  readonly tools: readonly string[];
  /** Jobs of the queue this process runs at once: the largest concurrency of its tools. */
  readonly concurrency: number;
  readonly rateLimit?: RateLimit;
}

/** A queue for tools found at run time (an upstream MCP server's): its concurrency and shards (default 1). */
export interface LaterQueue {
  readonly queue: string;
  readonly concurrency: number;
  readonly shards?: number;
}

/** The plans of queues whose tools come later; the tools published on one must say its `queueShards`. */
export function planLaterQueues(later: readonly LaterQueue[]): QueuePlan[] {
  return later.map((plan) => {
    const shards = plan.shards ?? 1;
    if (!Number.isInteger(shards) || shards < 1 || shards > MAX_QUEUE_SHARDS) {
      throw new TaskgateError('INVALID_CONFIG', `queue ${plan.queue}: shards must be 1 to 64, got ${shards}`);
    }
    return { queue: plan.queue, shards, tools: [], concurrency: plan.concurrency };
  });
}

/**
 * Groups tools by queue. BullMQ applies concurrency and rate limits per queue, so tools sharing a queue share
 * them: the queue runs as many jobs at once as its most concurrent tool allows, and at most one rate limit
 * may be declared among them.
 */
export function planQueues(tools: readonly AnyToolDefinition[], defaultShards = 1): QueuePlan[] {
  if (tools.length === 0) throw new TaskgateError('INVALID_CONFIG', 'createWorker needs at least one tool');
  const seen = new Set<string>();
  const plans = new Map<
    string,
    { tools: string[]; shards: number; concurrency: number; rateLimit?: RateLimit; limitedBy?: string }
  >();
  for (const tool of tools) {
    if (seen.has(tool.name)) {
      throw new TaskgateError('INVALID_CONFIG', `Two tools are named '${tool.name}': tool names must be unique`);
    }
    seen.add(tool.name);
    const shards = tool.queueShards ?? defaultShards;
    let plan = plans.get(tool.queue);
    if (plan === undefined) {
      plan = { tools: [], shards, concurrency: 0 };
      plans.set(tool.queue, plan);
    }
    if (plan.shards !== shards) {
      throw new TaskgateError(
        'INVALID_CONFIG',
        `Tools '${plan.tools[0]}' and '${tool.name}' share queue '${tool.queue}' but have ${plan.shards} and ${shards} queueShards; ` +
          'a queue has one shard count, so give them the same queueShards or separate queues',
      );
    }
    plan.tools.push(tool.name);
    plan.concurrency = Math.max(plan.concurrency, tool.concurrency);
    if (tool.rateLimit !== undefined) {
      const same =
        plan.rateLimit === undefined ||
        (plan.rateLimit.max === tool.rateLimit.max && plan.rateLimit.durationMs === tool.rateLimit.durationMs);
      if (!same) {
        throw new TaskgateError(
          'INVALID_CONFIG',
          `Tools '${plan.limitedBy}' and '${tool.name}' share queue '${tool.queue}' but declare different rate limits; ` +
            'BullMQ limits a whole queue, so give them the same rateLimit or separate queues',
        );
      }
      plan.rateLimit = tool.rateLimit;
      plan.limitedBy ??= tool.name;
    }
  }
  return [...plans].map(([queue, plan]) => ({
    queue,
    shards: plan.shards,
    tools: plan.tools,
    concurrency: plan.concurrency,
    ...(plan.rateLimit !== undefined && { rateLimit: plan.rateLimit }),
  }));
}
