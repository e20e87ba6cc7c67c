import { randomBytes } from 'node:crypto';
import { hostname } from 'node:os';
import {
  AmqpHandOffs,
  BridgePositions,
  CeleryHandOffs,
  closeRedis,
  createRedisConnection,
  ExistingQueue,
  errorMessage,
  Keys,
  type Logger,
  noopLogger,
  TaskOutbox,
  TaskStore,
  taskMetrics,
} from '@taskgate/core';
import {
  type AnyToolDefinition,
  type CreateWorkerOptions,
  createWorker,
  defineTool,
  type TaskgateWorker,
} from '@taskgate/worker';
import { Registry } from 'prom-client';
import { amqpTools } from './amqp/amqp-tools.js';
import { AmqpConnections } from './amqp/connection.js';
import { EventApplier } from './apply-event.js';
import { BridgeMetrics } from './bridge-metrics.js';
import { celeryTools } from './celery/celery-tools.js';
import {
  type AnyBridgedToolConfig,
  type BridgeConfig,
  type BridgedToolConfig,
  isAmqpConnection,
  isAmqpTool,
  isCeleryTool,
  isQueueTool,
} from './config.js';
import { followJob } from './follow-job.js';
import { QueueFollower } from './queue-follower.js';
import { createUpstreamServers } from './upstream/servers.js';

/**
 * Executions of a bridged task the worker runtime allows. Only a bridge that died while following a job
 * spends one (the re-run adds nothing and reads the job's state); the job's own attempts are the existing
 * queue's business.
 */
const BRIDGE_ATTEMPTS = 1000;

export interface CreateBridgeOptions
  extends Omit<CreateWorkerOptions, 'tools' | 'resources' | 'prompts' | 'laterQueues' | 'readyDetails'> {
  readonly config: BridgeConfig;
  /** Re-read of each followed job's state (ms, default 5000). */
  readonly pollMs?: number;
  /** Lease of one queue's event stream (ms, default 5000): a standby replica takes over this long after. */
  readonly leaseMs?: number;
  /** Longest wait of one read of an event stream (ms, default 1000). */
  readonly blockMs?: number;
}

/** A running bridge: a taskgate worker whose tools hand their tasks to existing queues. */
export interface TaskgateBridge extends TaskgateWorker {
  /** The existing queues the bridge follows, as `prefix:name@connection`. */
  readonly queues: readonly string[];
}

/** The tool as the catalog publishes it: the configured JSON Schemas exactly as written. */
function bridgedTool(
  tool: AnyBridgedToolConfig,
  run: AnyToolDefinition['handler'],
  onSkipped: (taskId: string) => Promise<void>,
): AnyToolDefinition {
  const definition = defineTool({
    name: tool.name,
    ...(tool.title !== undefined && { title: tool.title }),
    description: tool.description,
    inputSchema: tool.inputSchema as { type: 'object' },
    taskSupport: tool.taskSupport,
    queue: `bridge.${tool.name}`,
    ...(tool.queueShards !== undefined && { queueShards: tool.queueShards }),
    ...(tool.inlineWaitMs !== undefined && { inlineWaitMs: tool.inlineWaitMs }),
    ...(tool.allow !== undefined && { allow: tool.allow }),
    attempts: BRIDGE_ATTEMPTS,
    backoffMs: 500,
    concurrency: tool.concurrency,
    handler: run,
  }) as AnyToolDefinition;
  return Object.freeze({
    ...definition,
    onSkipped,
    ...(tool.outputSchema !== undefined && { outputJsonSchema: JSON.parse(JSON.stringify(tool.outputSchema)) }),
  });
}

/** How long, past one blocking read of an event stream, the followers may take to stop when the bridge closes. */
const FOLLOWER_CLOSE_MARGIN_MS = 2000;

/** True when `promise` settled within `ms`, false when it had not by then (it is left to settle later). */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const settled = promise.then(
    () => true as const,
    () => true as const,
  );
  return await Promise.race([settled, late]).finally(() => clearTimeout(timer));
}

/**
 * Starts a bridge: registers every configured tool in the catalog and consumes its taskgate queue; each task
 * becomes one job of the configured existing queue. One follower per existing queue applies the queue's event
 * stream to the tasks, from the position stored in taskgate's Redis, while this replica holds its lease.
 */
export function createBridge(options: CreateBridgeOptions): TaskgateBridge {
  const { config, pollMs = 5000, leaseMs = 5000, blockMs = 1000, ...workerOptions } = options;
  const logger: Logger = options.logger ?? noopLogger;
  const registry = options.metrics ?? new Registry();
  const metrics = new BridgeMetrics(registry);
  const keys = new Keys(options.prefix);
  const redis = createRedisConnection(options.redis, 'command', (error) =>
    logger.warn({ err: error.message }, 'redis connection error'),
  );
  const store = new TaskStore({ redis, keys, cursorSecret: randomBytes(32), observer: taskMetrics(registry) });
  const applier = new EventApplier({ store, outbox: new TaskOutbox({ redis, keys }), metrics, logger });
  const positions = new BridgePositions({ redis, keys });
  const holder = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  const followed = new Map<string, { queue: ExistingQueue; follower: QueueFollower }>();
  const followedOf = (tool: BridgedToolConfig): { queue: ExistingQueue; follower: QueueFollower } => {
    const url = config.connections[tool.queue.connection]?.url as string;
    const name = `${tool.queue.prefix}:${tool.queue.name}`;
    const key = `${name}@${tool.queue.connection}`;
    let entry = followed.get(key);
    if (entry === undefined) {
      const queue = new ExistingQueue({ url, prefix: tool.queue.prefix, name: tool.queue.name }, (error) =>
        logger.warn({ queue: key, err: error.message }, 'existing queue connection error'),
      );
      const tools = new Map(
        queueTools
          .filter((other) => `${other.queue.prefix}:${other.queue.name}@${other.queue.connection}` === key)
          .map((other) => [other.name, other]),
      );
      const stream = { connection: tool.queue.connection, queue: name };
      const follower = new QueueFollower({
        queue,
        stream,
        tools,
        positions,
        applier,
        metrics,
        logger,
        holder,
        leaseMs,
        blockMs,
      });
      entry = { queue, follower };
      followed.set(key, entry);
    }
    return entry;
  };
  const graceMs = leaseMs + pollMs;
  const queueTools = config.tools.filter(isQueueTool);
  const tools = queueTools.map((tool) => {
    const { queue, follower } = followedOf(tool);
    const deps = { tool, queue, follower, applier, metrics, pollMs, graceMs };
    const withdraw = async (taskId: string): Promise<void> => {
      if (await queue.removeIfWaiting(taskId)) {
        logger.info({ taskId, tool: tool.name, queue: tool.queue.name }, 'job of an ended task removed from its queue');
      }
    };
    return bridgedTool(tool, (args, ctx) => followJob(deps, args as Record<string, unknown>, ctx), withdraw);
  });
  // One connection per configured AMQP connection, shared by every tool on it; each reconnects by itself.
  const amqpUrls = Object.entries(config.connections).filter(([, connection]) => isAmqpConnection(connection));
  const amqpConnections = new AmqpConnections(new Map(amqpUrls.map(([name, { url }]) => [name, url])), logger);
  const celery = celeryTools({
    amqp: amqpConnections,
    config,
    tools: config.tools.filter(isCeleryTool),
    handOffs: new CeleryHandOffs({ redis, keys }),
    applier,
    metrics,
    logger,
    pollMs,
  });
  for (const { tool, run, onSkipped } of celery.tools) {
    tools.push(bridgedTool(tool, (args, ctx) => run(args as Record<string, unknown>, ctx), onSkipped));
  }
  const amqp = amqpTools({
    config,
    tools: config.tools.filter(isAmqpTool),
    connections: amqpConnections,
    handOffs: new AmqpHandOffs({ redis, keys }),
    applier,
    metrics,
    logger,
    pollMs,
  });
  for (const { tool, run, onSkipped } of amqp) {
    tools.push(bridgedTool(tool, (args, ctx) => run(args as Record<string, unknown>, ctx), onSkipped));
  }
  amqpConnections.start();
  const all = [...followed.values()];
  // Each queue's event stream is followed (or stood by for) before the bridge reports ready.
  const connected = (async () => {
    await Promise.all(all.map(({ queue }) => queue.ready()));
    await Promise.all(all.map(({ follower }) => follower.start()));
  })();
  connected.catch(() => {});
  const upstreams =
    config.servers.length === 0
      ? undefined
      : createUpstreamServers({
          servers: config.servers,
          redis,
          keys,
          registry,
          logger,
          ...(workerOptions.queueShards !== undefined && { defaultShards: workerOptions.queueShards }),
        });
  const worker = createWorker({
    ...workerOptions,
    tools,
    ...(upstreams !== undefined && {
      laterQueues: upstreams.queues,
      laterReadQueues: upstreams.readQueues,
      readyDetails: () => ({ servers: upstreams.states() }),
    }),
    metrics: registry,
    logger,
  });
  const ready = (async () => {
    await connected;
    await worker.ready;
    await upstreams?.start(worker);
    logger.info(
      { tools: worker.tools, queues: [...followed.keys()], servers: config.servers.map((server) => server.name) },
      'bridge ready',
    );
  })();
  ready.catch(() => {});
  let closing: Promise<void> | undefined;
  const close = (closeOptions?: { readonly deadlineMs?: number }): Promise<void> => {
    closing ??= (async () => {
      try {
        await worker.close(closeOptions);
      } finally {
        // After the drain: the calls in flight needed their upstream sessions until they ended.
        await upstreams?.close();
        const closeQueues = () =>
          Promise.all(
            all.map(({ queue }) =>
              queue.close().catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'queue close failed')),
            ),
          );
        // A follower ends with its round, whose commands wait for Redis (they are never given up): with Redis
        // gone they never answer. Past one blocking read and a margin, its connections are dropped, which
        // fails those commands, so a shutdown ends whatever state Redis is in.
        const followers = Promise.all(all.map(({ follower }) => follower.close()));
        if (!(await settlesWithin(followers, blockMs + FOLLOWER_CLOSE_MARGIN_MS))) {
          logger.warn(
            {},
            'the queue followers did not stop in time (Redis does not answer): dropping their connections',
          );
          await Promise.all([closeQueues(), closeRedis(redis)]);
        }
        await followers;
        await celery.close();
        await amqpConnections.close();
        await closeQueues();
        await closeRedis(redis);
      }
    })();
    return closing;
  };
  return {
    ready,
    publishTools: (group, published) => worker.publishTools(group, published),
    publishReads: (group, resources, prompts) => worker.publishReads(group, resources, prompts),
    tools: worker.tools,
    resources: worker.resources,
    prompts: worker.prompts,
    queues: [...followed.keys()],
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
