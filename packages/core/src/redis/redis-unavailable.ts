import { isReplicationTimeout } from './replication.js';

/**
 * Errors that mean "Redis is not reachable now" rather than "this request is wrong": the connection is down
 * or refused, a command timed out (`commandTimeout`) or gave up after its reconnects (`maxRetriesPerRequest`),
 * or the server is still loading its data after a restart, or is a replica now (READONLY: a failover
 * demoted it, and the connection moves to the new primary); or the replicas did not confirm a write in time
 * (TASKGATE_REDIS_WAIT_REPLICAS), which was then not acknowledged. A gateway answers them with 503 and a retry hint.
 */
const UNAVAILABLE_NAMES = new Set(['MaxRetriesPerRequestError', 'ClusterAllFailedError']);
const UNAVAILABLE_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENOTCONN']);
const UNAVAILABLE_MESSAGES = [
  /^Command timed out$/,
  /^Connection is closed\.?$/,
  /^Command aborted due to connection close/,
  /^Stream isn't writeable/,
  /^None of startup nodes is available/,
  /^Failed to refresh slots cache/,
  /^(LOADING|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|READONLY)\b/,
];

/** Does this error (or one of its causes) say that Redis cannot be reached at the moment? */
export function isRedisUnavailable(error: unknown, depth = 0): boolean {
  if (!(error instanceof Error) || depth > 4) return false;
  if (isReplicationTimeout(error)) return true;
  if (UNAVAILABLE_NAMES.has(error.name)) return true;
  const code = (error as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  if (UNAVAILABLE_MESSAGES.some((pattern) => pattern.test(error.message))) return true;
  return isRedisUnavailable(error.cause, depth + 1);
}
