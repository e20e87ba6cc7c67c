import { createMetricsRegistry } from '@taskgate/core';
import { type CreateWorkerOptions, createWorker, handleShutdownSignals } from '@taskgate/worker';
import { loadCommandConfig } from '../command-help.js';
import { type Config, ConfigError } from '../config.js';
import { loadOfferings } from '../load-tools.js';
import { createLogger } from '../logger.js';
import { checkRedisAtStart, redisConnectionOptions } from '../redis.js';
import { startTelemetry } from '../telemetry.js';

type Registry = NonNullable<CreateWorkerOptions['metrics']>;

/** Worker options from validated settings (tools and logger are the caller's). */
export function workerOptions(config: Config, metrics?: Registry): Omit<CreateWorkerOptions, 'tools' | 'logger'> {
  return {
    redis: redisConnectionOptions(config),
    prefix: config.TASKGATE_KEY_PREFIX,
    heartbeatMs: config.TASKGATE_WORKER_HEARTBEAT_MS,
    queueShards: config.TASKGATE_QUEUE_SHARDS,
    lockDurationMs: config.TASKGATE_LOCK_DURATION_MS,
    stalledIntervalMs: config.TASKGATE_STALLED_INTERVAL_MS,
    statusCheckMs: config.TASKGATE_STATUS_CHECK_MS,
    inputTimeoutMs: config.TASKGATE_INPUT_TIMEOUT_MS,
    clientTasks: config.TASKGATE_CLIENT_TASKS,
    clientTaskMinPollMs: config.TASKGATE_CLIENT_TASK_MIN_POLL_MS,
    abortGraceMs: config.TASKGATE_ABORT_GRACE_MS,
    ...(config.TASKGATE_DRAIN_TIMEOUT_MS > 0 && { drainTimeoutMs: config.TASKGATE_DRAIN_TIMEOUT_MS }),
    metricsPort: config.TASKGATE_METRICS_PORT,
    metricsHost: config.TASKGATE_METRICS_HOST,
    ...(metrics !== undefined && { metrics }),
  };
}

/** `taskgate worker --tools <module>[,<module>]`: runs the tools until SIGTERM/SIGINT, then drains and exits. */
export async function runWorker(argv: readonly string[]): Promise<number> {
  const { config, positionals } = loadCommandConfig('worker', argv);
  const modules = [...(config.TASKGATE_TOOLS ?? []), ...positionals];
  if (modules.length === 0) {
    throw new ConfigError([
      'TASKGATE_TOOLS (--tools) names no module: e.g. --tools @taskgate/examples or ./my-tools.js',
    ]);
  }
  const logger = createLogger(config.LOG_LEVEL, 'taskgate-worker');
  const telemetry = await startTelemetry('taskgate-worker', { redisSpans: config.TASKGATE_TRACE_REDIS, logger });
  const { tools, resources, prompts } = await loadOfferings(modules);
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const options = workerOptions(config, registry);
  await checkRedisAtStart(redisConnectionOptions(config), config, logger, registry);
  const worker = createWorker({
    ...options,
    tools,
    resources,
    prompts,
    logger,
  });
  await worker.ready;
  const code = await new Promise<number>((resolve) => {
    handleShutdownSignals(worker, { deadlineMs: config.TASKGATE_DRAIN_TIMEOUT_MS, logger, exit: resolve });
  });
  await telemetry?.shutdown();
  return code;
}
