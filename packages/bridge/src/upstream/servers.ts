import type { Tool as UpstreamTool } from '@modelcontextprotocol/sdk/types.js';
import {
  errorMessage,
  type Keys,
  type Logger,
  ResourceInterest,
  UpstreamCalls,
  UpstreamSnapshots,
} from '@taskgate/core';
import type { TaskgateWorker } from '@taskgate/worker';
import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import type { UpstreamServerConfig } from './server-config.js';
import { callUpstream } from './upstream-call.js';
import { listAllTools, upstreamRunsTasks, upstreamToolDefinitions } from './upstream-catalog.js';
import { UpstreamMetrics } from './upstream-metrics.js';
import { UpstreamPool } from './upstream-pool.js';
import { listAllReads, upstreamReadDefinitions } from './upstream-reads.js';
import { REV_2025_11_25 } from './upstream-session.js';
import { UpstreamSubscriptions } from './upstream-subscriptions.js';

/** How long the last tool list of a server is kept for a bridge that starts while it is down (ms). */
const SNAPSHOT_TTL_MS = 7 * 24 * 3600 * 1000;

export interface UpstreamServersOptions {
  readonly servers: readonly UpstreamServerConfig[];
  readonly redis: Redis;
  readonly keys: Keys;
  readonly registry: Registry;
  readonly logger: Logger;
  /** Shards of a server's queue when it does not say (`queueShards`): the bridge's TASKGATE_QUEUE_SHARDS. */
  readonly defaultShards?: number;
}

/** The upstream MCP servers of a bridge: their sessions, their tools in the catalog, their calls. */
export interface UpstreamServers {
  /** The queues their tools' jobs go to, one per server, with its `concurrency` and shards. */
  readonly queues: readonly { readonly queue: string; readonly concurrency: number; readonly shards: number }[];
  /** The queues of their resource reads and prompt gets, one per server. */
  readonly readQueues: readonly string[];
  /** Starts the servers and publishes their tools through `worker` (its `ready` resolved). */
  start(worker: TaskgateWorker): Promise<void>;
  /** Each server's state, for readiness. */
  states(): Record<string, 'up' | 'down'>;
  /** Stops the servers (after the worker drained the calls in flight). */
  close(): Promise<void>;
}

/** Wires `servers:` of the bridge config: one pool of sessions per server, its catalog kept current. */
export function createUpstreamServers(options: UpstreamServersOptions): UpstreamServers {
  const { logger } = options;
  const metrics = new UpstreamMetrics(options.registry);
  const calls = new UpstreamCalls({ redis: options.redis, keys: options.keys });
  const snapshots = new UpstreamSnapshots({ redis: options.redis, keys: options.keys });
  const interest = new ResourceInterest({ redis: options.redis, keys: options.keys });
  let worker: TaskgateWorker | undefined;
  // Each server with its shard count settled, so its queue and every tool published on it agree.
  const servers = options.servers.map((server) => ({
    ...server,
    queueShards: server.queueShards ?? options.defaultShards ?? 1,
  }));

  const entries = servers.map((server) => {
    let refreshing: Promise<void> | undefined;
    let again = false;
    const pool: UpstreamPool = new UpstreamPool(server, { logger, metrics, onToolsChanged: () => refresh() });
    const deps = { server, pool, calls, metrics };
    const subscriptions = new UpstreamSubscriptions({
      name: server.name,
      pool,
      interest,
      announce: async (uri) => worker?.resourceUpdated(uri),
      logger,
    });
    const publish = async (tools: readonly UpstreamTool[], asTask: (tool: UpstreamTool) => boolean) => {
      const definitions = upstreamToolDefinitions(
        server,
        tools,
        asTask,
        (tool, task, args, ctx) => callUpstream(deps, tool, task, args, ctx),
        logger,
      );
      await worker?.publishTools(`upstream:${server.name}`, definitions);
      return definitions.length;
    };
    const list = async (): Promise<void> => {
      const control = pool.control;
      if (control === undefined || worker === undefined) return;
      const tools = await listAllTools(control.client);
      // 2025-11-25: the tools the server runs as tasks; 2026-07-28: every tool of a server of the tasks extension
      // (it decides per call), so that a bridge that takes a call over after a crash follows its upstream task.
      const asTask = (tool: UpstreamTool): boolean =>
        control.revision === REV_2025_11_25 ? upstreamRunsTasks(control.sdkV1, tool) : control.tasks !== undefined;
      // The snapshot says the same in the tools' own terms, for a bridge that starts before the server is up.
      const snapshot = tools.map((tool) => (asTask(tool) ? { ...tool, execution: { taskSupport: 'optional' } } : tool));
      await snapshots.save(server.name, snapshot, SNAPSHOT_TTL_MS);
      const count = await publish(tools, asTask);
      const listed = await listAllReads(control.client);
      subscriptions.offer(listed);
      const reads = upstreamReadDefinitions(server, listed, pool, logger);
      await worker.publishReads(`upstream:${server.name}`, reads.resources, reads.prompts);
      logger.info(
        { server: server.name, tools: count, resources: reads.resources.length, prompts: reads.prompts.length },
        'upstream tools published',
      );
    };
    // Coalesces list_changed news: one listing at a time, one more if news came meanwhile.
    const refresh = (): void => {
      if (refreshing !== undefined) {
        again = true;
        return;
      }
      refreshing = (async () => {
        do {
          again = false;
          await list().catch((error: unknown) =>
            logger.warn({ server: server.name, err: errorMessage(error) }, 'upstream tools could not be listed'),
          );
        } while (again);
        refreshing = undefined;
      })();
    };
    /** The entries last listed, published until the server is up (a call meanwhile fails fast). */
    const fromSnapshot = async (): Promise<void> => {
      const tools = (await snapshots.load(server.name)) as UpstreamTool[];
      if (tools.length === 0 || pool.up) return;
      const support = (tool: UpstreamTool) => ['optional', 'required'].includes(tool.execution?.taskSupport ?? '');
      const count = await publish(tools, support);
      logger.warn({ server: server.name, tools: count }, 'upstream down: its last listed tools are published');
    };
    return { server, pool, subscriptions, fromSnapshot };
  });

  return {
    queues: servers.map((server) => ({
      queue: `upstream.${server.name}`,
      concurrency: server.concurrency,
      shards: server.queueShards,
    })),
    readQueues: servers.map((server) => `upstream-reads.${server.name}`),
    async start(started: TaskgateWorker): Promise<void> {
      worker = started;
      for (const { pool, subscriptions } of entries) {
        pool.start();
        subscriptions.start();
      }
      await Promise.all(
        entries.map(({ server, fromSnapshot }) =>
          fromSnapshot().catch((error: unknown) =>
            logger.warn({ server: server.name, err: errorMessage(error) }, 'last listed tools could not be read'),
          ),
        ),
      );
    },
    states: () => Object.fromEntries(entries.map(({ server, pool }) => [server.name, pool.up ? 'up' : 'down'])),
    async close(): Promise<void> {
      for (const { subscriptions } of entries) subscriptions.close();
      await Promise.all(entries.map(({ pool }) => pool.close()));
    },
  };
}
