// The defaults of `createWorker`, which `taskgate worker` shares. This file imports only core's defaults, so the
// CLI reads it (`@taskgate/worker/defaults`) without loading the worker at start-up.
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_KEY_PREFIX } from '@taskgate/core/defaults';

/**
 * The default of every worker option: `createWorker` and `taskgate worker` both start from these (the CLI's
 * settings take their defaults from here, and a test compares the two). The one exception is `metricsPort`:
 * an embedded worker opens no port unless asked, while `taskgate worker` serves its metrics on 9464.
 */
export const WORKER_DEFAULTS = {
  prefix: DEFAULT_KEY_PREFIX,
  queueShards: 1,
  heartbeatMs: 10_000,
  /**
   * Crash detection: a killed worker's task runs again (or fails) 9.7-12.6 s after the kill with these
   * defaults (`bash scripts/bench --crash`; BullMQ's own 30 s + 30 s took 49-56 s), while an event loop may
   * block for up to 5 s (half the lock, the renewal period) without losing a lock.
   */
  lockDurationMs: 10_000,
  /** How often a worker looks for jobs of crashed workers (one check per queue across all workers). */
  stalledIntervalMs: 5000,
  statusCheckMs: 2000,
  inputTimeoutMs: 600_000,
  clientTasks: 'auto',
  clientTaskMinPollMs: 1000,
  drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS,
  abortGraceMs: 5000,
  readConcurrency: 16,
  metricsPort: 0,
  metricsHost: '127.0.0.1',
} as const;
