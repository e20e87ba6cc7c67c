import { ExistingQueue, errorMessage, type Logger, noopLogger } from '@taskgate/core';
import {
  type AnyToolDefinition,
  type CreateWorkerOptions,
  createWorker,
  defineTool,
  type TaskgateWorker,
} from '@taskgate/worker';
import { Registry } from 'prom-client';
import { BridgeMetrics } from './bridge-metrics.js';
import type { BridgeConfig, BridgedToolConfig } from './config.js';
import { followJob } from './follow-job.js';

/**
 * Executions of a bridged task the worker runtime allows. Only a bridge that died while following a job
 * spends one (the re-run adds nothing and reads the job's state); the job's own attempts are the existing
 * queue's business.
 */
const BRIDGE_ATTEMPTS = 1000;

export interface CreateBridgeOptions extends Omit<CreateWorkerOptions, 'tools' | 'resources' | 'prompts'> {
  readonly config: BridgeConfig;
  /** Safety-net re-read of each followed job's state (ms, default 5000). */
  readonly pollMs?: number;
}

/** A running bridge: a taskgate worker whose tools hand their tasks to existing queues. */
export interface TaskgateBridge extends TaskgateWorker {
  /** The existing queues the bridge follows, as `prefix:name@connection`. */
  readonly queues: readonly string[];
}

/** The tool as the catalog publishes it: the configured JSON Schemas exactly as written. */
function bridgedTool(tool: BridgedToolConfig, run: AnyToolDefinition['handler']): AnyToolDefinition {
  const definition = defineTool({
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    taskSupport: tool.taskSupport,
    queue: `bridge.${tool.name}`,
    attempts: BRIDGE_ATTEMPTS,
    backoffMs: 500,
    concurrency: tool.concurrency,
    handler: run,
  }) as AnyToolDefinition;
  if (tool.outputSchema === undefined) return definition;
  return Object.freeze({ ...definition, outputJsonSchema: JSON.parse(JSON.stringify(tool.outputSchema)) });
}

/**
 * Starts a bridge: registers every configured tool in the catalog and consumes its taskgate queue; each task
 * becomes one job of the configured existing queue, followed until it ends.
 */
export function createBridge(options: CreateBridgeOptions): TaskgateBridge {
  const { config, pollMs = 5000, ...workerOptions } = options;
  const logger: Logger = options.logger ?? noopLogger;
  const registry = options.metrics ?? new Registry();
  const metrics = new BridgeMetrics(registry);
  const queues = new Map<string, ExistingQueue>();
  const queueOf = (tool: BridgedToolConfig): ExistingQueue => {
    const url = config.connections[tool.queue.connection]?.url as string;
    const key = `${tool.queue.prefix}:${tool.queue.name}@${tool.queue.connection}`;
    let queue = queues.get(key);
    if (queue === undefined) {
      queue = new ExistingQueue({ url, prefix: tool.queue.prefix, name: tool.queue.name }, (error) =>
        logger.warn({ queue: key, err: error.message }, 'existing queue connection error'),
      );
      queues.set(key, queue);
    }
    return queue;
  };
  const tools = config.tools.map((tool) => {
    const deps = { tool, queue: queueOf(tool), metrics, pollMs };
    return bridgedTool(tool, (args, ctx) => followJob(deps, args as Record<string, unknown>, ctx));
  });
  const all = [...queues.values()];
  // The worker takes tasks only once every existing queue's event stream is followed.
  const connected = Promise.all(all.map((queue) => queue.ready()));
  connected.catch(() => {});
  const worker = createWorker({ ...workerOptions, tools, metrics: registry, logger });
  const ready = (async () => {
    await connected;
    await worker.ready;
    logger.info({ tools: worker.tools, queues: [...queues.keys()] }, 'bridge ready');
  })();
  ready.catch(() => {});
  let closing: Promise<void> | undefined;
  const close = (closeOptions?: { readonly deadlineMs?: number }): Promise<void> => {
    closing ??= (async () => {
      try {
        await worker.close(closeOptions);
      } finally {
        await Promise.all(
          all.map((queue) =>
            queue.close().catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'queue close failed')),
          ),
        );
      }
    })();
    return closing;
  };
  return {
    ready,
    tools: worker.tools,
    resources: worker.resources,
    prompts: worker.prompts,
    queues: [...queues.keys()],
    resourceUpdated: (uri) => worker.resourceUpdated(uri),
    get active() {
      return worker.active;
    },
    get metricsPort() {
      return worker.metricsPort;
    },
    metrics: registry,
    close,
  };
}
