import {
  errorMessage,
  isRedisUnavailable,
  Keys,
  type Logger,
  RateLimiter,
  type RateLimitVerdict,
} from '@taskgate/core';
import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { OperationClass, RateLimit, ResolvedGatewayOptions } from '../options.js';
import type { GatewayMetrics } from './gateway-metrics.js';

const OPERATIONS: Readonly<Record<string, OperationClass>> = {
  'tools/call': 'create',
  'tasks/get': 'read',
  'tasks/list': 'read',
  'tasks/result': 'read',
  'tasks/cancel': 'cancel',
  // Revision 2026-07-28: answering input changes a task, like cancelling it; opening a notification stream reads
  // task state (and is also capped by the open-stream limit). `server/discover` has none, like `initialize`.
  'tasks/update': 'cancel',
  'subscriptions/listen': 'read',
  // Reads served by workers: each runs a short job, and clients ask for them often (completion per keystroke).
  'resources/read': 'read',
  'prompts/get': 'read',
  'completion/complete': 'read',
};

/**
 * The operation class of a JSON-RPC method, or undefined for methods without a limit (initialize, ping,
 * tools/list, ...). Every `tools/call` is a `create`: plain calls run through a (hidden) task record too.
 * The reads workers serve (`resources/read`, `prompts/get`, `completion/complete`) count as `read`. On
 * revision 2026-07-28 `tasks/update` counts as `cancel` (a write to an existing task), `subscriptions/listen` as
 * `read`, and `server/discover` has no limit.
 */
export function operationOf(method: string): OperationClass | undefined {
  return Object.hasOwn(OPERATIONS, method) ? OPERATIONS[method] : undefined;
}

/** What a refused request carries in `error.data`. */
export interface RateLimitedData {
  readonly operation: OperationClass;
  readonly retryAfterMs: number;
  readonly limit: number;
  readonly windowSeconds: number;
}

/** -32029 with a retry hint. */
export function rateLimited(operation: OperationClass, limit: RateLimit, retryAfterMs: number): ProtocolError {
  const data: RateLimitedData = {
    operation,
    retryAfterMs,
    limit: limit.points,
    windowSeconds: limit.durationSec,
  };
  return new ProtocolError(
    ErrorCode.RateLimited,
    `Rate limit exceeded: at most ${limit.points} ${operation} operations per ${limit.durationSec} s for each ` +
      `principal. Retry after ${Math.ceil(retryAfterMs / 1000)} s.`,
    data,
  );
}

/** The retry hint of a rate-limit or stream-limit error, in ms, or undefined for any other error. */
export function retryAfterMsOf(error: unknown): number | undefined {
  if (!(error instanceof ProtocolError)) return undefined;
  if (error.code !== ErrorCode.RateLimited && error.code !== ErrorCode.StreamLimitExceeded) return undefined;
  const hint = (error.data as Partial<RateLimitedData> | undefined)?.retryAfterMs;
  return typeof hint === 'number' ? hint : undefined;
}

/**
 * Per-principal rate limits by operation class (SEC-3): one fixed-window counter per class and owner in
 * Redis (core's `RateLimiter`), so every gateway of a deployment counts against the same budget. Owners
 * appear in keys only as digests.
 */
export class RateLimits {
  readonly #limiters = new Map<OperationClass, { limiter: RateLimiter; limit: RateLimit }>();
  readonly #metrics: GatewayMetrics;

  constructor(redis: Redis, keys: Keys, options: ResolvedGatewayOptions, metrics: GatewayMetrics) {
    this.#metrics = metrics;
    for (const [operation, limit] of Object.entries(options.rateLimits) as [OperationClass, RateLimit | undefined][]) {
      if (limit === undefined) continue;
      const limiter = new RateLimiter({
        redis,
        keys,
        operation,
        points: limit.points,
        durationSec: limit.durationSec,
      });
      this.#limiters.set(operation, { limiter, limit });
    }
  }

  /**
   * Spends one operation of `owner`'s budget, or throws -32029 with `data.retryAfterMs`. When Redis does not
   * answer, that error goes on (503 with a retry hint): the request's next command would wait out the same
   * timeout again before failing the same way. Any other failure of the limiter lets the request pass (a
   * limiter must not turn its own fault into refusals).
   */
  async consume(operation: OperationClass, owner: string, logger: Logger): Promise<void> {
    const entry = this.#limiters.get(operation);
    if (entry === undefined) return;
    let verdict: RateLimitVerdict;
    try {
      verdict = await entry.limiter.consume(owner);
    } catch (error) {
      if (isRedisUnavailable(error)) throw error;
      logger.warn({ operation, err: errorMessage(error) }, 'rate limiter unavailable; request let through');
      return;
    }
    if (verdict.allowed) return;
    this.#metrics.rateLimited(operation);
    logger.warn(
      { audit: 'rate_limited', operation, owner: Keys.ownerId(owner), retryAfterMs: verdict.retryAfterMs },
      'rate limit exceeded',
    );
    throw rateLimited(operation, entry.limit, verdict.retryAfterMs);
  }
}
