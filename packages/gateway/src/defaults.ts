// The defaults of `createGateway`, which `taskgate gateway` shares. This file imports only core's defaults, so the
// CLI reads it (`@taskgate/gateway/defaults`) without loading the gateway at start-up.
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_KEY_PREFIX } from '@taskgate/core/defaults';

/** Host names a local gateway answers to by default (DNS-rebinding protection). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/**
 * The default of every gateway option: `createGateway` and `taskgate gateway` both start from these (the
 * CLI's settings take their defaults from here, and a test compares the two).
 */
export const GATEWAY_DEFAULTS = {
  keyPrefix: DEFAULT_KEY_PREFIX,
  toolsPageSize: 100,
  bodyLimitBytes: 1024 * 1024,
  sessionIdleTtlMs: 30 * 60 * 1000,
  sseHeartbeatMs: 15_000,
  sseRetryMs: 1000,
  eventLogMaxEvents: 1000,
  eventLogRetentionMs: 10 * 60 * 1000,
  directCallTtlMs: 60 * 60 * 1000,
  inlineWaitMs: 0,
  directCallCancelGraceMs: 5000,
  resultStreamAfterMs: 1000,
  allowedHosts: LOOPBACK_HOSTS,
  allowedOrigins: 'loopback',
  toolStaleAfterMs: 30_000,
  toolCacheMs: 2000,
  drainTimeoutMs: DEFAULT_DRAIN_TIMEOUT_MS,
  readTimeoutMs: 30_000,
  waiterSafetyMs: 300_000,
  drainRetryAfterMs: 1000,
  maxSessionsPerPrincipal: 1000,
  maxStreamsPerPrincipal: 1000,
  headersTimeoutMs: 20_000,
  rateLimits: {
    create: { points: 120, durationSec: 60 },
    read: { points: 1200, durationSec: 60 },
    cancel: { points: 120, durationSec: 60 },
  },
  path: '/mcp',
} as const;
