// The defaults core shares with the gateway, the worker and the CLI. This file imports nothing, so the CLI reads
// them (`@taskgate/core/defaults`) without loading Redis clients at start-up.

/** The prefix of every key and channel unless a deployment names its own. */
export const DEFAULT_KEY_PREFIX = 'tg';

/**
 * How long a gateway or worker lets running work finish when it shuts down (ms): a worker's tools, a
 * gateway's plain tool calls. It stays under Kubernetes' 30 s grace period, so a pod drains before it is killed.
 */
export const DEFAULT_DRAIN_TIMEOUT_MS = 25_000;

/** The task limits a store enforces unless told otherwise (`TaskLimits`). */
export const DEFAULT_TASK_LIMITS = {
  defaultTtlMs: 60 * 60 * 1000,
  maxTtlMs: 24 * 60 * 60 * 1000,
  minTtlMs: 1000,
  pollIntervalMs: 1000,
  maxActivePerOwner: 100,
  pageSize: 50,
  cursorTtlMs: 60 * 60 * 1000,
} as const;
