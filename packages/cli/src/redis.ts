import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  checkRedisRequirements,
  closeRedis,
  type createMetricsRegistry,
  createRedisConnection,
  DEFAULT_COMMAND_TIMEOUT_MS,
  errorMessage,
  isRedisUnavailable,
  type RedisConnectionOptions,
  RedisRequirementError,
  requirementsMetrics,
} from '@taskgate/core';
import { type Config, ConfigError } from './config.js';
import type { createLogger } from './logger.js';

type Logger = ReturnType<typeof createLogger>;
type Registry = ReturnType<typeof createMetricsRegistry>;

/** The one RedisConnectionOptions of a process, from its settings; every problem names its setting. */
export function redisConnectionOptions(config: Config): RedisConnectionOptions {
  const problems: string[] = [];
  const sentinels = config.TASKGATE_REDIS_SENTINELS ?? [];
  const clusterNodes = config.TASKGATE_REDIS_CLUSTER_NODES ?? [];
  if (sentinels.length > 0 && config.TASKGATE_REDIS_SENTINEL_NAME === undefined) {
    problems.push('TASKGATE_REDIS_SENTINELS is set without TASKGATE_REDIS_SENTINEL_NAME (the master to ask for)');
  }
  if (sentinels.length > 0 && clusterNodes.length > 0) {
    problems.push('TASKGATE_REDIS_CLUSTER_NODES and TASKGATE_REDIS_SENTINELS are both set: choose one topology');
  }
  let tlsCa: string | undefined;
  const caFile = config.TASKGATE_REDIS_TLS_CA_FILE;
  if (caFile !== undefined) {
    try {
      tlsCa = readFileSync(resolve(caFile), 'utf8');
    } catch (error) {
      problems.push(
        `TASKGATE_REDIS_TLS_CA_FILE (--redis-tls-ca-file): cannot read ${caFile} (${(error as Error).message})`,
      );
    }
  }
  if (
    config.TASKGATE_REDIS_WAIT_REPLICAS > 0 &&
    config.TASKGATE_REDIS_COMMAND_TIMEOUT_MS <= config.TASKGATE_REDIS_WAIT_TIMEOUT_MS
  ) {
    problems.push(
      `TASKGATE_REDIS_COMMAND_TIMEOUT_MS (${config.TASKGATE_REDIS_COMMAND_TIMEOUT_MS}) must exceed TASKGATE_REDIS_WAIT_TIMEOUT_MS (${config.TASKGATE_REDIS_WAIT_TIMEOUT_MS}): a WAIT would time out as a command first`,
    );
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return {
    url: config.REDIS_URL,
    ...(clusterNodes.length > 0 && { clusterNodes }),
    ...(sentinels.length > 0 && { sentinels, sentinelName: config.TASKGATE_REDIS_SENTINEL_NAME as string }),
    ...(config.TASKGATE_REDIS_USERNAME !== undefined && { username: config.TASKGATE_REDIS_USERNAME }),
    ...(config.TASKGATE_REDIS_PASSWORD !== undefined && { password: config.TASKGATE_REDIS_PASSWORD }),
    ...(tlsCa !== undefined && { tlsCa }),
    // The default is core's own: only another value needs saying.
    ...(config.TASKGATE_REDIS_COMMAND_TIMEOUT_MS !== DEFAULT_COMMAND_TIMEOUT_MS && {
      commandTimeoutMs: config.TASKGATE_REDIS_COMMAND_TIMEOUT_MS,
    }),
    ...(config.TASKGATE_REDIS_WAIT_REPLICAS > 0 && {
      waitReplicas: { replicas: config.TASKGATE_REDIS_WAIT_REPLICAS, timeoutMs: config.TASKGATE_REDIS_WAIT_TIMEOUT_MS },
    }),
  };
}

/** How long a process waits at start for a Redis that does not answer yet (starting beside it, failing over). */
export const REDIS_START_WAIT_MS = 60_000;

/**
 * Checks the Redis server before a process starts (version, eviction policy, persistence) on a connection
 * of its own; throws a ConfigError-like refusal when the server must not be used. A Redis that does not
 * answer yet (refused, timed out, loading) is asked again every second for up to `REDIS_START_WAIT_MS`,
 * with a warning each time; then the last error ends the start.
 */
export async function checkRedisAtStart(
  options: RedisConnectionOptions,
  config: Config,
  logger: Logger,
  registry: Registry,
  waitMs = REDIS_START_WAIT_MS,
): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (let attempt = 1; ; attempt++) {
    const redis = createRedisConnection(options, 'command', (error) =>
      logger.warn({ err: error.message }, 'redis connection error'),
    );
    try {
      await checkRedisRequirements(redis, {
        strict: config.TASKGATE_REDIS_STRICT,
        logger,
        observer: requirementsMetrics(registry),
      });
      return;
    } catch (error) {
      if (error instanceof RedisRequirementError) throw new ConfigError([...error.problems]);
      if (!isRedisUnavailable(error) || Date.now() >= deadline) throw error;
      logger.warn({ err: errorMessage(error), attempt }, 'waiting for Redis to answer before starting');
    } finally {
      await closeRedis(redis);
    }
    await sleep(1000);
  }
}
