import { randomBytes } from 'node:crypto';
import {
  announceListChanged,
  announceResourceUpdated,
  closeRedis,
  consumeQueue,
  createRedisConnection,
  EventBus,
  ensureScriptsLoaded,
  errorMessage,
  InputRequests,
  Keys,
  type Logger,
  MAX_QUEUE_SHARDS,
  noopLogger,
  podName,
  type QueueConsumer,
  type RedisConnectionOptions,
  TaskgateError,
  TaskOutbox,
  TaskStore,
  ToolCatalog,
  type ToolJobData,
  ToolQueues,
  taskMetrics,
  taskRefOf,
  WorkerRegistry,
  watchQueues,
  watchRedis,
} from '@taskgate/core';
import type { Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { WORKER_DEFAULTS } from './defaults.js';
import type { AnyPromptDefinition } from './define-prompt.js';
import { type AnyToolDefinition, toCatalogEntry } from './define-tool.js';
import { FinalFailures } from './final-failures.js';
import { LiveTools } from './live-tools.js';
import { type OpsServer, startOpsServer } from './ops-server.js';
import { type LaterQueue, planLaterQueues, planQueues, type QueuePlan } from './queue-plan.js';
import { type AnyResourceDefinition, createReadServer } from './read-server.js';
import { RecordedFailure, type RunnerDeps, type RunningJob, runJob } from './run-job.js';
import { DEFAULT_SHARD_RETIRE_AFTER_MS, queuesToConsume } from './shard-history.js';
import { TaskWatch } from './task-watch.js';
import { WorkerMetrics } from './worker-metrics.js';

/**
 * BullMQ's own limit on how often a job may stall before BullMQ fails it. Crashes are counted against the
 * tool's `attempts` by `runJob` instead (BullMQ's limit is per worker, not per tool), so this only has to
 * stay out of the way.
 */
const BULLMQ_STALL_LIMIT = 1_000_000;

export interface CreateWorkerOptions {
  /** An ioredis connection (duplicated, never closed by the worker), or connection options or a Redis URL. */
  readonly redis: Redis | RedisConnectionOptions | string;
  /** Key prefix shared with the gateways (default `tg`). */
  readonly prefix?: string;
  readonly tools: readonly AnyToolDefinition[];
  /** Shards of each tool queue whose tools do not say (`queueShards`); default 1 (TASKGATE_QUEUE_SHARDS). */
  readonly queueShards?: number;
  /** How long after the last worker ran an old shard count its drained shards are left (ms; default 10 min). */
  readonly shardRetireAfterMs?: number;
  /** Resources and resource templates (`defineResource`, `defineResourceTemplate`) this worker serves. */
  readonly resources?: readonly AnyResourceDefinition[];
  /** Prompts (`definePrompt`) this worker serves. */
  readonly prompts?: readonly AnyPromptDefinition[];
  /**
   * Queues consumed besides those of `tools`, for tools found at run time and published with `publishTools`
   * (an upstream MCP server's): per queue the jobs one process runs at once and its shards.
   */
  readonly laterQueues?: readonly LaterQueue[];
  /** Read queues consumed besides those of `resources` and `prompts`, for offerings published with `publishReads`. */
  readonly laterReadQueues?: readonly string[];
  /** Resource reads, prompt gets and completions one process runs at once (default 16). */
  readonly readConcurrency?: number;
  readonly logger?: Logger;
  /** How often the worker re-announces its tools in the catalog (ms, default 10 000). */
  readonly heartbeatMs?: number;
  /**
   * BullMQ job lock duration (ms, default 10 000), renewed every half of it: a crashed worker's jobs are
   * recovered about this plus up to `stalledIntervalMs` after the crash; an event loop blocked for longer
   * than half of it may lose the lock (the task then counts as crashed).
   */
  readonly lockDurationMs?: number;
  /** How often BullMQ looks for jobs of crashed workers (ms, default 5000). */
  readonly stalledIntervalMs?: number;
  /** Safety-net re-read of running tasks' status, for lost cancel messages (ms, default 2000). */
  readonly statusCheckMs?: number;
  /** How long `ctx.elicit` / `ctx.sample` wait for the answer (ms, default 600 000). */
  readonly inputTimeoutMs?: number;
  /**
   * `auto` (default): `ctx.elicit` / `ctx.sample` run as client tasks (CLT-1) where the client declared them;
   * `off`: only when a tool asks with `asTask: true`.
   */
  readonly clientTasks?: 'auto' | 'off';
  /** The shortest pause between two `tasks/get` of a client task (ms, default 1000). */
  readonly clientTaskMinPollMs?: number;
  /** Default drain deadline of `close()` (ms, default 25 000). */
  readonly drainTimeoutMs?: number;
  /** How long an aborted handler may take to return before the worker stops waiting for it (ms, default 5000). */
  readonly abortGraceMs?: number;
  /** Prometheus registry for the worker's metrics. Default: a private one (without Node.js process metrics). */
  readonly metrics?: Registry;
  /** Port of the worker's own `/metrics`, `/healthz`, `/readyz` endpoint; 0 or absent: no endpoint. */
  readonly metricsPort?: number;
  /** Address that endpoint listens on (default 127.0.0.1; 0.0.0.0 in containers). */
  readonly metricsHost?: string;
  /** More of the state `/readyz` shows beside its status (a bridge: its upstream servers, each up or down). */
  readonly readyDetails?: () => Record<string, unknown>;
}

/** A running worker process's handle. */
export interface TaskgateWorker {
  /** Resolves once the tools are in the catalog and their BullMQ workers run. */
  readonly ready: Promise<void>;
  /**
   * Publishes tools found at run time (their queues among `laterQueues`) in place of those published
   * before under the same `group`; the ones left out stop being announced and drop out of the catalog.
   */
  publishTools(group: string, tools: readonly AnyToolDefinition[]): Promise<void>;
  /** Like `publishTools`, for resources, resource templates and prompts (their queues among `laterReadQueues`). */
  publishReads(
    group: string,
    resources: readonly AnyResourceDefinition[],
    prompts: readonly AnyPromptDefinition[],
  ): Promise<void>;
  /** Names of the tools this worker runs. */
  readonly tools: readonly string[];
  /** URIs and URI templates of the resources this worker serves. */
  readonly resources: readonly string[];
  /** Names of the prompts this worker serves. */
  readonly prompts: readonly string[];
  /** Executions running now. */
  readonly active: number;
  /** Tells the sessions subscribed to `uri` that it changed (`notifications/resources/updated`). */
  resourceUpdated(uri: string): Promise<void>;
  /** The port of the metrics endpoint once `ready` resolved (undefined without one). */
  readonly metricsPort: number | undefined;
  /** The worker's Prometheus registry. */
  readonly metrics: Registry;
  /**
   * Stops taking jobs and lets running ones finish; at `deadlineMs` aborts the rest (`ctx.signal`, reason
   * `shutdown`) and puts their jobs back in the queue for another worker. Then closes the connections.
   */
  close(options?: { readonly deadlineMs?: number }): Promise<void>;
}

function positive(name: string, value: number | undefined, fallback: number): number {
  const resolved = value ?? fallback;
  if (!Number.isFinite(resolved) || resolved <= 0) {
    throw new TaskgateError('INVALID_CONFIG', `${name} must be a positive number of milliseconds, got ${value}`);
  }
  return resolved;
}

/** Starts a worker: registers `tools` in the catalog (with heartbeats) and consumes their BullMQ queues. */
export function createWorker(options: CreateWorkerOptions): TaskgateWorker {
  const offersReads = (options.resources?.length ?? 0) + (options.prompts?.length ?? 0) > 0;
  const defaultShards = options.queueShards ?? WORKER_DEFAULTS.queueShards;
  if (!Number.isInteger(defaultShards) || defaultShards < 1 || defaultShards > MAX_QUEUE_SHARDS) {
    throw new TaskgateError('INVALID_CONFIG', `queueShards must be a whole number from 1 to 64, got ${defaultShards}`);
  }
  const later = planLaterQueues(options.laterQueues ?? []);
  // A worker may serve only resources and prompts, or tools found later; planQueues insists on tools otherwise.
  const plans = [
    ...((offersReads || later.length > 0) && options.tools.length === 0
      ? []
      : planQueues(options.tools, defaultShards)),
    ...later,
  ];
  const logger = options.logger ?? noopLogger;
  const settings = {
    heartbeatMs: positive('heartbeatMs', options.heartbeatMs, WORKER_DEFAULTS.heartbeatMs),
    lockDurationMs: positive('lockDurationMs', options.lockDurationMs, WORKER_DEFAULTS.lockDurationMs),
    stalledIntervalMs: positive('stalledIntervalMs', options.stalledIntervalMs, WORKER_DEFAULTS.stalledIntervalMs),
    statusCheckMs: positive('statusCheckMs', options.statusCheckMs, WORKER_DEFAULTS.statusCheckMs),
    inputTimeoutMs: positive('inputTimeoutMs', options.inputTimeoutMs, WORKER_DEFAULTS.inputTimeoutMs),
    drainTimeoutMs: positive('drainTimeoutMs', options.drainTimeoutMs, WORKER_DEFAULTS.drainTimeoutMs),
    abortGraceMs: positive('abortGraceMs', options.abortGraceMs, WORKER_DEFAULTS.abortGraceMs),
  };
  const keys = new Keys(options.prefix ?? WORKER_DEFAULTS.prefix);
  // BullMQ needs maxRetriesPerRequest: null on connections it shares; a duplicate lets us set it and own it.
  const redis = createRedisConnection(options.redis, 'bullmq-worker', (error) =>
    logger.warn({ err: error.message }, 'redis connection error'),
  );
  const registry = options.metrics ?? new Registry();
  const metrics = new WorkerMetrics(registry);
  const bus = new EventBus(redis, keys);
  // The trail records which pod started and finished each task (the operator console's timeline).
  const store = new TaskStore({
    redis,
    keys,
    cursorSecret: randomBytes(32),
    observer: taskMetrics(registry),
    pod: podName(),
  });
  const ownQueues = new ToolQueues({ connection: redis, keys });
  const unwatch = [
    watchRedis(registry, redis, 'commands'),
    watchRedis(registry, bus.connection, 'subscriber'),
    watchQueues(registry, async () => consumed.map((queue) => ownQueues.queue(queue))),
  ];
  const catalog = new ToolCatalog({ redis, keys });
  const liveTools = new LiveTools(options.tools);
  const running = new Map<string, RunningJob>();
  const deps: RunnerDeps = {
    store,
    outbox: new TaskOutbox({ redis, keys }),
    inputs: new InputRequests({ redis, bus, keys }),
    inputTimeoutMs: settings.inputTimeoutMs,
    clientTasks: options.clientTasks ?? WORKER_DEFAULTS.clientTasks,
    clientTaskMinPollMs: positive(
      'clientTaskMinPollMs',
      options.clientTaskMinPollMs,
      WORKER_DEFAULTS.clientTaskMinPollMs,
    ),
    announce: (uri: string) => announceResourceUpdated(redis, keys, uri),
    announceListChanged: (kind) => announceListChanged(redis, keys, kind),
    tools: liveTools.byName,
    ...(later.length > 0 && { laterTool: (name: string) => liveTools.waitFor(name) }),
    watch: new TaskWatch({ store, bus, intervalMs: settings.statusCheckMs, logger }),
    logger,
    abortGraceMs: settings.abortGraceMs,
    running,
  };
  const reads = createReadServer({
    redis,
    keys,
    store,
    watch: deps.watch,
    logger,
    resources: options.resources ?? [],
    prompts: options.prompts ?? [],
    concurrency: positive('readConcurrency', options.readConcurrency, WORKER_DEFAULTS.readConcurrency),
    lockDurationMs: settings.lockDurationMs,
    stalledIntervalMs: settings.stalledIntervalMs,
    announce: deps.announce,
    ...(options.laterReadQueues !== undefined && { laterQueues: options.laterReadQueues }),
  });

  const finalFailures = new FinalFailures(store, logger);
  /** A job BullMQ failed for good without runJob storing an outcome (e.g. Redis trouble): fail the task too. */
  const onFailed = (job: Job<ToolJobData> | undefined, error: Error): void => {
    if (job === undefined || error instanceof RecordedFailure || typeof job.data?.taskId !== 'string') return;
    const final = error.name === 'UnrecoverableError' || job.attemptsMade >= (job.opts.attempts ?? 1);
    if (final) void finalFailures.fail(taskRefOf(job.data), error.message);
  };

  /** Consumes one BullMQ queue (one shard) of a plan. */
  const consume = (plan: QueuePlan, queue: string): QueueConsumer => {
    const processor = (job: Job<ToolJobData>, token: string | undefined): Promise<void> =>
      metrics.execution(String(job.data?.tool), () => runJob(deps, job, token));
    return consumeQueue<ToolJobData>(queue, processor, {
      connection: redis,
      keys,
      concurrency: plan.concurrency,
      ...(plan.rateLimit !== undefined && { limiter: plan.rateLimit }),
      lockDurationMs: settings.lockDurationMs,
      stalledIntervalMs: settings.stalledIntervalMs,
      maxStalledCount: BULLMQ_STALL_LIMIT,
      onError: (error) => logger.error({ queue, err: error.message }, 'worker error'),
      onFailed,
      onLockRenewalFailed: (jobIds) => {
        for (const id of jobIds) running.get(id)?.abort('lock-lost');
      },
    });
  };
  // Filled once the shard history is read (ready): the shards of each plan, old counts' shards until drained.
  const workers: QueueConsumer[] = [];
  const consumed: string[] = [];
  const retireAfterMs = positive('shardRetireAfterMs', options.shardRetireAfterMs, DEFAULT_SHARD_RETIRE_AFTER_MS);

  const names = options.tools.map((tool) => tool.name);
  const liveEntries = () => liveTools.all().map((tool) => toCatalogEntry(tool, defaultShards));
  // The operator console lists live workers from these heartbeats (three heartbeats long).
  const presence = new WorkerRegistry(redis, keys);
  const self = { id: randomBytes(9).toString('base64url'), pod: podName(), tools: names, startedAt: Date.now() };
  const beat = (): Promise<void> => presence.beat(self, 3 * settings.heartbeatMs);
  let heartbeat: NodeJS.Timeout | undefined;
  let closing: Promise<void> | undefined;
  let started = false;
  const metricsPort = options.metricsPort ?? WORKER_DEFAULTS.metricsPort;
  const ops: Promise<OpsServer | undefined> =
    metricsPort > 0
      ? startOpsServer({
          port: metricsPort,
          host: options.metricsHost ?? WORKER_DEFAULTS.metricsHost,
          registry,
          logger,
          // Ready: the tools are registered and consumed, not shutting down, and Redis has the scripts.
          ready: async () => started && closing === undefined && (await ensureScriptsLoaded(redis).then(() => true)),
          ...(options.readyDetails !== undefined && { details: options.readyDetails }),
        })
      : Promise.resolve(undefined);
  let opsServer: OpsServer | undefined;
  // Heartbeats only refresh liveness; after a reconnect (Redis may have restarted empty) publish the entries again.
  bus.onReconnect(() => {
    Promise.all([catalog.register(liveEntries()), reads?.register()]).catch((error: unknown) =>
      logger.warn({ err: errorMessage(error) }, 're-register failed'),
    );
  });
  const ready = (async () => {
    opsServer = await ops;
    for (const plan of plans) {
      const queues = await queuesToConsume(catalog, ownQueues, plan, retireAfterMs, logger);
      if (closing !== undefined) return;
      for (const queue of queues) workers.push(consume(plan, queue));
      consumed.push(...queues);
    }
    await Promise.all(workers.map((worker) => worker.ready()));
    await Promise.all([catalog.register(liveEntries()), reads?.start(), beat()]);
    if (closing !== undefined) return;
    heartbeat = setInterval(() => {
      // Entries are written again (no news announced): the catalog ends up with the shard count of the workers
      // alive, even when a worker of an old count registered last during a rollout.
      const shardCounts = plans.map((plan) => catalog.recordShardCount(plan.queue, plan.shards));
      Promise.all([
        catalog.register(liveEntries(), { announce: false }),
        ...shardCounts,
        reads?.heartbeat(),
        beat(),
      ]).catch((error: unknown) => logger.warn({ err: errorMessage(error) }, 'heartbeat failed'));
    }, settings.heartbeatMs);
    heartbeat.unref();
    started = true;
    logger.info({ tools: names, queues: consumed }, 'worker ready');
  })();
  // Callers await `ready`; this only keeps an unawaited failure from crashing the process.
  ready.catch(() => {});

  const close = (closeOptions: { readonly deadlineMs?: number } = {}): Promise<void> => {
    closing ??= (async () => {
      clearInterval(heartbeat);
      metrics.draining();
      // Not awaited: during a Redis outage this connection waits for Redis, and a shutdown must not.
      presence.leave(self.id).catch(() => {});
      const deadlineMs = closeOptions.deadlineMs ?? settings.drainTimeoutMs;
      logger.info({ active: running.size, deadlineMs }, 'worker closing');
      const deadline = setTimeout(() => {
        for (const execution of running.values()) execution.abort('shutdown');
      }, deadlineMs);
      try {
        await Promise.all([...workers.map((worker) => worker.close()), reads?.close()]);
      } finally {
        clearTimeout(deadline);
        finalFailures.close();
        deps.watch.close();
        for (const stop of unwatch) stop();
        await ownQueues.close();
        await bus.close();
        await closeRedis(redis);
        await (opsServer ?? (await ops.catch(() => undefined)))?.close();
      }
      logger.info({}, 'worker closed');
    })();
    return closing;
  };

  const publishTools = async (group: string, tools: readonly AnyToolDefinition[]): Promise<void> => {
    const removed = liveTools.publish(group, tools);
    await catalog.register(tools.map((tool) => toCatalogEntry(tool, defaultShards)));
    if (removed) await announceListChanged(redis, keys, 'tools');
  };

  return {
    ready,
    publishTools,
    publishReads: async (group, resources, prompts) => {
      if (reads === undefined) throw new TaskgateError('INVALID_CONFIG', 'publishReads needs laterReadQueues');
      await reads.publish(group, resources, prompts);
    },
    tools: names,
    resources: reads?.resources ?? [],
    resourceUpdated: deps.announce,
    prompts: reads?.prompts ?? [],
    get active() {
      return running.size;
    },
    get metricsPort() {
      return opsServer?.port;
    },
    metrics: registry,
    close,
  };
}
