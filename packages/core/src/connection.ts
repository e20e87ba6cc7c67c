import { Redis } from 'ioredis';

/**
 * What a connection is for. `command`: the process's commands connection (stores, scripts, BullMQ queues of
 * a gateway). `subscriber`: the event bus's pub/sub connection (resubscribes after a reconnect). `bullmq-worker`:
 * a worker's connection, shared with BullMQ workers, which require `maxRetriesPerRequest: null`.
 */
export type RedisRole = 'command' | 'subscriber' | 'bullmq-worker';

// No auto-pipelining on any role: ioredis builds a Pipeline per tick that copies every script command BullMQ
// and taskgate define on the connection, which cost more CPU in a profile than the socket writes it saves.
const ROLE_OPTIONS = {
  command: { enableAutoPipelining: false },
  subscriber: { autoResubscribe: true, enableOfflineQueue: true, lazyConnect: false, enableAutoPipelining: false },
  'bullmq-worker': { maxRetriesPerRequest: null, enableAutoPipelining: false },
} as const;

/**
 * Opens a Redis connection for one role: from a URL, or as a duplicate of an existing connection (same server
 * and options, with the role's own). The one place where taskgate creates connections (a later Cluster,
 * Sentinel or TLS set-up goes here). `onError` hears the connection's errors (else they are unhandled).
 */
export function createRedisConnection(from: string | Redis, role: RedisRole, onError?: (error: Error) => void): Redis {
  const options = ROLE_OPTIONS[role];
  const redis = typeof from === 'string' ? new Redis(from, options) : from.duplicate(options);
  // Connection errors are retried by ioredis; `onError` only reports them.
  if (onError !== undefined) redis.on('error', onError);
  return redis;
}
