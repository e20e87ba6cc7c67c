import { CeleryBroker, type CeleryHandOffs, CeleryResults, errorMessage, type Logger } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import type { ToolContext } from '@taskgate/worker';
import type { EventApplier } from '../apply-event.js';
import type { BridgeMetrics } from '../bridge-metrics.js';
import type { BridgeConfig, CeleryToolConfig } from '../config.js';
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
}

/** The Celery-bridged tools: one broker and one result backend connection per configured connection. */
export function celeryTools(options: CeleryToolsOptions): { tools: CeleryTool[]; close: () => Promise<void> } {
  const { config, logger } = options;
  const brokers = new Map<string, CeleryBroker>();
  const backends = new Map<string, CeleryResults>();
  const urlOf = (name: string): string => config.connections[name]?.url as string;
  const onError = (connection: string) => (error: Error) =>
    logger.warn({ connection, err: error.message }, 'celery connection error');
  const tools = options.tools.map((tool): CeleryTool => {
    const brokerName = tool.celery.connection;
    const backendName = tool.celery.resultBackend ?? brokerName;
    let broker = brokers.get(brokerName);
    if (broker === undefined) {
      broker = new CeleryBroker(urlOf(brokerName), onError(brokerName));
      brokers.set(brokerName, broker);
    }
    let results = backends.get(backendName);
    if (results === undefined) {
      results = new CeleryResults(urlOf(backendName), onError(backendName));
      backends.set(backendName, results);
    }
    const deps: CeleryDeps = { ...options, tool, broker, results };
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
  const close = async (): Promise<void> => {
    await Promise.all(
      [...brokers.values(), ...backends.values()].map((connection) =>
        connection.close().catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'celery close failed')),
      ),
    );
  };
  return { tools, close };
}
