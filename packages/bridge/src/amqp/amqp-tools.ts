import type { AmqpHandOffs, Logger } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { ToolContext } from '@taskgate/worker';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import { type AmqpToolConfig, type BridgeConfig, DEFAULT_REPLY_QUEUE } from '../config.js';
import { ReplyConsumer } from './amqp-replies.js';
import type { AmqpConnections } from './connection.js';
import { type AmqpDeps, followAmqp, sendCancel } from './follow-amqp.js';

/** An `amqp:` tool's handler and what it does with a task that ended before any bridge ran it. */
export interface AmqpTool {
  readonly tool: AmqpToolConfig;
  readonly run: (args: Record<string, unknown>, ctx: ToolContext) => Promise<CallToolResult>;
  readonly onSkipped: (taskId: string) => Promise<void>;
}

export interface AmqpToolsOptions {
  readonly config: BridgeConfig;
  readonly tools: readonly AmqpToolConfig[];
  readonly connections: AmqpConnections;
  readonly handOffs: AmqpHandOffs;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  readonly logger: Logger;
  readonly pollMs: number;
}

/**
 * The `amqp:` tools: each AMQP connection they use gets one consumer of its durable reply queue (declared and
 * consumed again on every reconnection), shared by the connection's tools.
 */
export function amqpTools(options: AmqpToolsOptions): AmqpTool[] {
  const { config, connections, logger } = options;
  const consumers = new Map<string, { consumer: ReplyConsumer; queue: string }>();
  const consumerOf = (name: string): { consumer: ReplyConsumer; queue: string } => {
    let entry = consumers.get(name);
    if (entry === undefined) {
      const queue = config.connections[name]?.replyQueue ?? DEFAULT_REPLY_QUEUE;
      const tools = new Map(
        options.tools.filter((tool) => tool.amqp.connection === name).map((tool) => [tool.name, tool]),
      );
      const connection = connections.get(name);
      const consumer = new ReplyConsumer({ ...options, connection, queue, tools });
      void connection.addSetup(consumer.setup);
      entry = { consumer, queue };
      consumers.set(name, entry);
    }
    return entry;
  };
  return options.tools.map((tool): AmqpTool => {
    const { consumer, queue } = consumerOf(tool.amqp.connection);
    const deps: AmqpDeps = {
      ...options,
      tool,
      connection: connections.get(tool.amqp.connection),
      replies: consumer,
      replyQueue: queue,
    };
    return {
      tool,
      run: (args, ctx) => followAmqp(deps, args, ctx),
      // Cancelled while no bridge waited for it: the service is told (the arguments are no longer at hand).
      onSkipped: async (taskId) => {
        if (tool.amqp.cancel === undefined) return;
        await sendCancel(deps, taskId, {}).then(
          () => logger.info({ taskId, tool: tool.name }, 'amqp cancel message sent for an ended task'),
          (error: unknown) =>
            logger.warn({ taskId, tool: tool.name, err: String(error) }, 'could not send the amqp cancel message'),
        );
      },
    };
  });
}
