import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { BridgeConfigError, createBridge, loadBridgeConfig } from '@taskgate/bridge';
import { createMetricsRegistry } from '@taskgate/core';
import { handleShutdownSignals } from '@taskgate/worker';
import { loadCommandConfig } from '../command-help.js';
import { ConfigError } from '../config.js';
import { createLogger } from '../logger.js';
import { checkRedisAtStart, redisConnectionOptions } from '../redis.js';
import { startTelemetry } from '../telemetry.js';
import { workerOptions } from './worker.js';

/** Reads and validates the bridge config file; every problem names the file and its path in it. */
function readBridgeConfig(path: string): ReturnType<typeof loadBridgeConfig> {
  let text: string;
  try {
    text = readFileSync(resolve(path), 'utf8');
  } catch (error) {
    throw new ConfigError([`TASKGATE_BRIDGE_CONFIG (--config): cannot read ${path} (${(error as Error).message})`]);
  }
  try {
    return loadBridgeConfig(text);
  } catch (error) {
    if (error instanceof BridgeConfigError)
      throw new ConfigError(error.problems.map((problem) => `${path}: ${problem}`));
    throw error;
  }
}

/** `taskgate bridge --config bridge.yaml`: offers existing BullMQ queues as tools until SIGTERM/SIGINT. */
export async function runBridge(argv: readonly string[]): Promise<number> {
  const { config } = loadCommandConfig('bridge', argv);
  if (config.TASKGATE_BRIDGE_CONFIG === undefined) {
    throw new ConfigError(['TASKGATE_BRIDGE_CONFIG (--config) names no file: e.g. --config bridge.yaml']);
  }
  const bridgeConfig = readBridgeConfig(config.TASKGATE_BRIDGE_CONFIG);
  const logger = createLogger(config.LOG_LEVEL, 'taskgate-bridge');
  const telemetry = await startTelemetry('taskgate-bridge', { redisSpans: config.TASKGATE_TRACE_REDIS, logger });
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const options = workerOptions(config, registry);
  await checkRedisAtStart(redisConnectionOptions(config), config, logger, registry);
  const bridge = createBridge({
    ...options,
    config: bridgeConfig,
    logger,
  });
  // Signals are handled from here on: readiness may be reported (by the worker part) before `ready` settles.
  const exited = new Promise<number>((done) => {
    handleShutdownSignals(bridge, { deadlineMs: config.TASKGATE_DRAIN_TIMEOUT_MS, logger, exit: done });
  });
  await bridge.ready;
  const code = await exited;
  await telemetry?.shutdown();
  return code;
}
