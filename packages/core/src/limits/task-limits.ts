import { DEFAULT_TASK_LIMITS } from '../defaults.js';
import { TaskgateError } from '../errors.js';

/** The limits a task store enforces (TTL-3). Every one is configurable and documented. */
export interface TaskLimits {
  /** ttl granted when a request names none (ms). */
  readonly defaultTtlMs: number;
  /** Largest ttl ever granted; larger requests are clamped to it (ms). */
  readonly maxTtlMs: number;
  /** Smallest ttl ever granted; smaller requests are raised to it (ms). */
  readonly minTtlMs: number;
  /** Suggested polling interval reported on every task (ms). */
  readonly pollIntervalMs: number;
  /** Non-terminal tasks one owner may have at once (0 = unlimited). */
  readonly maxActivePerOwner: number;
  /** Tasks per `tasks/list` page. */
  readonly pageSize: number;
  /** How long a `tasks/list` cursor stays valid (ms). */
  readonly cursorTtlMs: number;
}

/** Fills in defaults and refuses nonsense (a clear error at start-up beats odd behaviour later). */
export function resolveTaskLimits(overrides: Partial<TaskLimits> = {}): TaskLimits {
  const limits: TaskLimits = { ...DEFAULT_TASK_LIMITS, ...overrides };
  const positive = ['defaultTtlMs', 'maxTtlMs', 'minTtlMs', 'pageSize', 'cursorTtlMs'] as const;
  for (const name of positive) {
    if (!Number.isSafeInteger(limits[name]) || limits[name] <= 0) {
      throw new TaskgateError('INVALID_CONFIG', `${name} must be a positive integer, got ${limits[name]}`);
    }
  }
  for (const name of ['pollIntervalMs', 'maxActivePerOwner'] as const) {
    if (!Number.isSafeInteger(limits[name]) || limits[name] < 0) {
      throw new TaskgateError('INVALID_CONFIG', `${name} must be a non-negative integer, got ${limits[name]}`);
    }
  }
  if (limits.minTtlMs > limits.maxTtlMs) {
    throw new TaskgateError('INVALID_CONFIG', `minTtlMs (${limits.minTtlMs}) exceeds maxTtlMs (${limits.maxTtlMs})`);
  }
  if (limits.pageSize > 1000) throw new TaskgateError('INVALID_CONFIG', `pageSize must be at most 1000`);
  return limits;
}

/** The ttl granted for a requested one (TTL-1): the default when absent, clamped to [min, max]. */
export function grantTtl(limits: TaskLimits, requested: number | undefined): number {
  const wanted = requested === undefined || !Number.isFinite(requested) ? limits.defaultTtlMs : Math.floor(requested);
  return Math.min(limits.maxTtlMs, Math.max(limits.minTtlMs, wanted));
}
