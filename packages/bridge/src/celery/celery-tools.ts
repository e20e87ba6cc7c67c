import { CeleryBroker, type CeleryHandOffs, CeleryResults, errorMessage, type Logger } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { ToolContext } from '@taskgate/worker';
import type { AmqpConnections } from '../amqp/connection.js';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import type { BridgeConfig, CeleryToolConfig } from '../config.js';
import { AmqpCeleryTransport } from './celery-amqp.js';
import { CeleryAmqpLink } from './celery-amqp-link.js';
import { DEFAULT_RESULT_QUEUE, isAmqpUrl, RPC_BACKEND } from './celery-config.js';
import { consumeRpcResults } from './celery-rpc.js';
import { type CeleryTransport, redisTransport } from './celery-transport.js';
import { type CeleryDeps, followCelery, withdrawCelery } from './follow-celery.js';

/** A Celery-bridged tool's handler and what it does with a task that ended before any bridge ran it. */
export interface CeleryTool {
  readonly tool: CeleryToolConfig;
  readonly run: (args: Record<string, unknown>, ctx: ToolContext) => Promise<CallToolResult>;
  readonly onSkipped: (taskId: string) => Promise<void>;
}

export interface CeleryToolsOptions {
  readonly config: BridgeConfig;
  readonly tools: readonly CeleryToolConfig[];
  readonly handOffs: CeleryHandOffs;
  readonly applier: EventApplier;
  readonly metrics: BridgeMetrics;
  readonly logger: Logger;
  readonly pollMs: number;
  /** The bridge's AMQP connections (an `amqp://` broker of a tool is one of them). */
  readonly amqp: AmqpConnections;
}

/**
 * The Celery-bridged tools: one broker (Redis, or one of the bridge's AMQP connections), one Redis result
 * backend connection per configured connection, and one consumer per queue that Celery's `rpc://` backend
 * sends states to. AMQP connections are started here and closed with the bridge's.
 */
export function celeryTools(options: CeleryToolsOptions): { tools: CeleryTool[]; close: () => Promise<void> } {
  const { config, logger } = options;
  const brokers = new Map<string, CeleryTransport>();
  const links = new Map<string, CeleryAmqpLink>();
  const backends = new Map<string, CeleryResults>();
  const rpcTools = new Map<string, Map<string, CeleryToolConfig>>();
  const urlOf = (name: string): string => config.connections[name]?.url as string;
  const onError = (connection: string) => (error: Error) =>
    logger.warn({ connection, err: error.message }, 'celery connection error');
  const linkOf = (name: string): CeleryAmqpLink => {
    let link = links.get(name);
    if (link === undefined) {
      link = new CeleryAmqpLink(options.amqp.get(name));
      links.set(name, link);
    }
    return link;
  };
  const brokerOf = (name: string): CeleryTransport => {
    let broker = brokers.get(name);
    if (broker === undefined) {
      if (isAmqpUrl(urlOf(name))) {
        const queueArguments = new Map(
          options.tools
            .filter((tool) => tool.celery.connection === name)
            .map((tool) => [tool.celery.queue, tool.celery.queueArguments] as const),
        );
        broker = new AmqpCeleryTransport(linkOf(name), queueArguments);
      } else broker = redisTransport(new CeleryBroker(urlOf(name), onError(name)));
      brokers.set(name, broker);
    }
    return broker;
  };
  const tools = options.tools.map((tool): CeleryTool => {
    const brokerName = tool.celery.connection;
    const broker = brokerOf(brokerName);
    const rpc = tool.celery.resultBackend === RPC_BACKEND;
    let results: CeleryResults | undefined;
    let replyTo = '';
    if (rpc) {
      replyTo = tool.celery.resultQueue ?? DEFAULT_RESULT_QUEUE;
      const key = `${brokerName}\n${replyTo}`;
      const byName = rpcTools.get(key) ?? new Map<string, CeleryToolConfig>();
      byName.set(tool.name, tool);
      rpcTools.set(key, byName);
    } else {
      const backendName = tool.celery.resultBackend ?? brokerName;
      results = backends.get(backendName);
      if (results === undefined) {
        results = new CeleryResults(urlOf(backendName), onError(backendName));
        backends.set(backendName, results);
      }
    }
    const deps: CeleryDeps = { ...options, tool, broker, results, replyTo };
    return {
      tool,
      run: (args, ctx) => followCelery(deps, args, ctx),
      // The task was cancelled while no bridge followed it: its message, if one was sent, is taken back.
      onSkipped: async (taskId) => {
        if (!(await options.handOffs.wasSent(taskId))) return;
        const how = await withdrawCelery(deps, taskId);
        logger.info({ taskId, tool: tool.name, how }, 'celery task of an ended task withdrawn');
      },
    };
  });
  for (const link of links.values()) link.start();
  for (const [key, byName] of rpcTools) {
    const [connection, queue] = key.split('\n') as [string, string];
    const link = linkOf(connection);
    const broker = brokerOf(connection);
    consumeRpcResults({ ...options, link, broker, queue, tools: byName, onError: onError(connection) });
  }
  const close = async (): Promise<void> => {
    await Promise.all(
      [...brokers.values(), ...backends.values()].map((connection) =>
        connection.close().catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'celery close failed')),
      ),
    );
  };
  return { tools, close };
}
