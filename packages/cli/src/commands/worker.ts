import { createWorker, handleShutdownSignals } from '@taskgate/worker';
import { ConfigError, loadConfig } from '../config.js';
import { loadTools } from '../load-tools.js';
import { createLogger } from '../logger.js';

/** `taskgate worker --tools <module>[,<module>]`: runs the tools until SIGTERM/SIGINT, then drains and exits. */
export async function runWorker(argv: readonly string[]): Promise<number> {
  const { config, positionals } = loadConfig('worker', argv);
  const modules = [...(config.TASKGATE_TOOLS ?? []), ...positionals];
  if (modules.length === 0) {
    throw new ConfigError([
      'TASKGATE_TOOLS (--tools) names no module: e.g. --tools @taskgate/examples or ./my-tools.js',
    ]);
  }
  const logger = createLogger(config.LOG_LEVEL, 'taskgate-worker');
  const tools = await loadTools(modules);
  const worker = createWorker({ redis: config.REDIS_URL, prefix: config.TASKGATE_KEY_PREFIX, tools, logger });
  await worker.ready;
  logger.info({ tools: worker.tools }, 'worker ready');
  return await new Promise<number>((resolve) => {
    handleShutdownSignals(worker, { deadlineMs: config.TASKGATE_DRAIN_TIMEOUT_MS, logger, exit: resolve });
  });
}
