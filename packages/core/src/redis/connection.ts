import type { ConnectionOptions } from 'node:tls';
import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { batchWrites } from './write-batching.js';

/**
 * What a connection is for. `command`: the process's commands connection (stores, scripts, BullMQ queues of
 * a gateway). `subscriber`: the event bus's pub/sub connection (resubscribes after a reconnect). `bullmq-worker`:
 * a worker's connection, shared with BullMQ workers, which require `maxRetriesPerRequest: null`.
 * `invalidations`: where Redis sends a tracking connection's invalidations (RESP2 pub/sub; its owner subscribes
 * again after each reconnect, since the connection's id changes with it).
 */
export type RedisRole = 'command' | 'subscriber' | 'bullmq-worker' | 'invalidations';

/** One `host:port` of a cluster node or a sentinel. */
export interface RedisNode {
  readonly host: string;
  readonly port: number;
}

/**
 * Where and how every connection of a process reaches Redis: one URL (a single server; `rediss://` for TLS),
 * or Sentinel (`sentinels` with `sentinelName`), or Cluster (`clusterNodes`). Credentials and the TLS CA apply
 * to all of them. Built once from the settings and passed to `createRedisConnection`.
 */
export interface RedisConnectionOptions {
  readonly url: string;
  readonly clusterNodes?: readonly RedisNode[];
  readonly sentinels?: readonly RedisNode[];
  readonly sentinelName?: string;
  readonly username?: string;
  readonly password?: string;
  /** PEM text of the CA that signs the servers' certificates (read from a file at start-up). */
  readonly tlsCa?: string;
  /** Replicas a new or finished task must reach before it is acknowledged (see `awaitReplicas`). */
  readonly waitReplicas?: WaitReplicas;
  /**
   * How long a command of a `command` connection may wait for its reply, queued while disconnected included
   * (ms, default `DEFAULT_COMMAND_TIMEOUT_MS`); it then fails ("Command timed out") instead of hanging on a
   * Redis that is down or frozen. Workers' and subscribers' connections wait for Redis instead.
   */
  readonly commandTimeoutMs?: number;
}

/** A gateway's request fails this long at most after Redis stopped answering (ms). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 5000;

/** `WAIT` after the writes that acknowledge a task: `replicas` must have them within `timeoutMs`. */
export interface WaitReplicas {
  readonly replicas: number;
  readonly timeoutMs: number;
}

/** The replication a connection's acknowledged writes wait for (inherited by its duplicates). */
const waitPolicies = new WeakMap<object, WaitReplicas>();

/** The WAIT policy of a connection, if its options set one. */
export function waitPolicyOf(redis: Redis): WaitReplicas | undefined {
  return waitPolicies.get(redis);
}

// No auto-pipelining on any role: ioredis builds a Pipeline per tick that copies every script command BullMQ
// and taskgate define on the connection, which cost more CPU in a profile than the socket writes it saves.
// Only `command` connections time commands out (`commandTimeoutMs`): the others hold blocking commands
// (BullMQ's BZPOPMIN, XREAD BLOCK) and must wait, so their duplicates drop an inherited timeout.
// Every role speaks RESP3 (ioredis sends HELLO 3) with replies in the RESP2 shapes core and BullMQ read (maps as
// flat arrays, doubles as strings): stated here, so a change of the client's default cannot reshape them.
const ROLE_OPTIONS = {
  // Producers fail fast: a command waits through at most 3 reconnects (a failover) and at most its timeout,
  // then its request fails (503) instead of hanging; the client may retry. BullMQ's workers wait instead.
  command: { maxRetriesPerRequest: 3, enableAutoPipelining: false, replyMapping: 'legacy' },
  // No ready check (INFO) on the subscriber: a SUBSCRIBE written while the connection is still connecting
  // (ioredis sends it at once) puts it in subscriber mode, where ioredis refuses its own INFO, calls the
  // connection failed and rejects every command queued on it; a reconnect under load hit exactly that.
  // Nor a command given up after some reconnects, nor CLIENT SETINFO: with either, a connection that a proxy
  // accepts and then drops (Redis behind it down) ends the wait for its replies, ioredis then declares the dead
  // connection ready, spends its saved subscriptions and SUBSCRIBEs on it, and none are ever sent again.
  subscriber: {
    enableReadyCheck: false,
    maxRetriesPerRequest: null,
    disableClientInfo: true,
    autoResubscribe: true,
    enableOfflineQueue: true,
    lazyConnect: false,
    enableAutoPipelining: false,
    commandTimeout: undefined,
    replyMapping: 'legacy',
  },
  // RESP2: a RESP3 connection is sent invalidations as `invalidate` pushes, which ioredis drops; a RESP2 one
  // subscribed to `__redis__:invalidate` is sent them as messages of that channel. Its owner sets it up anew
  // after each connect: a command of a set-up the drop cut short fails, never queued or sent again (a SUBSCRIBE
  // sent again would put the new connection in subscriber mode before its set-up asks for its id).
  invalidations: {
    enableReadyCheck: false,
    maxRetriesPerRequest: null,
    disableClientInfo: true,
    autoResubscribe: false,
    enableOfflineQueue: false,
    autoResendUnfulfilledCommands: false,
    protocol: 2,
    enableAutoPipelining: false,
    commandTimeout: undefined,
    replyMapping: 'legacy',
  },
  'bullmq-worker': {
    maxRetriesPerRequest: null,
    enableAutoPipelining: false,
    commandTimeout: undefined,
    replyMapping: 'legacy',
  },
} as const;

/** Options of a connection whose replies keep the RESP2 shapes, as every connection taskgate opens. */
type LegacyReplyOptions = Omit<RedisOptions, 'replyMapping'> & { readonly replyMapping: 'legacy' };

/** The role's options, with the command timeout of `command` connections. */
function roleOptions(role: RedisRole, options: Pick<RedisConnectionOptions, 'commandTimeoutMs'>): LegacyReplyOptions {
  if (role !== 'command') return ROLE_OPTIONS[role];
  return { ...ROLE_OPTIONS.command, commandTimeout: options.commandTimeoutMs ?? DEFAULT_COMMAND_TIMEOUT_MS };
}

/** Server options shared by every topology: credentials, TLS (a `rediss://` URL or a CA). */
function serverOptions(options: RedisConnectionOptions): {
  readonly username?: string;
  readonly password?: string;
  readonly tls?: ConnectionOptions;
} {
  const tls = options.url.startsWith('rediss://') || options.tlsCa !== undefined;
  return {
    ...(options.username !== undefined && { username: options.username }),
    ...(options.password !== undefined && { password: options.password }),
    ...(tls && { tls: options.tlsCa === undefined ? {} : { ca: options.tlsCa } }),
  };
}

function open(options: RedisConnectionOptions, role: RedisRole): Redis {
  const ofRole = roleOptions(role, options);
  const server = serverOptions(options);
  if (options.clusterNodes !== undefined && options.clusterNodes.length > 0) {
    const cluster = new Cluster(
      options.clusterNodes.map((node) => ({ ...node })),
      {
        enableReadyCheck: true,
        scaleReads: 'master',
        enableAutoPipelining: false,
        redisOptions: { ...server, ...ofRole },
        // SSUBSCRIBE needs a connection to the master of each channel's slot (one more per master); SUBSCRIBE
        // keeps the one classic subscriber connection.
        ...(role === 'subscriber' && { shardedSubscribers: true }),
        ...(server.tls !== undefined && { dnsLookup: (address, callback) => callback(null, address) }),
      },
    );
    // Cluster speaks the same command surface taskgate uses; cross-slot scripts fail until the keys are hash-tagged.
    return cluster as unknown as Redis;
  }
  if (options.sentinels !== undefined && options.sentinels.length > 0) {
    return new Redis({
      ...server,
      ...ofRole,
      sentinels: options.sentinels.map((node) => ({ ...node })),
      name: options.sentinelName ?? 'mymaster',
      ...(options.username !== undefined && { sentinelUsername: options.username }),
      ...(options.password !== undefined && { sentinelPassword: options.password }),
      ...(server.tls !== undefined && { enableTLSForSentinelMode: true, sentinelTLS: server.tls }),
    });
  }
  return new Redis(options.url, { ...server, ...ofRole });
}

/** A new connection to the same server(s) with the role's options (a Cluster takes them per node). */
function duplicate(from: Redis | Cluster, role: RedisRole): Redis {
  const inherited = from instanceof Redis ? from.options.commandTimeout : from.options.redisOptions?.commandTimeout;
  const ofRole = roleOptions(role, inherited === undefined ? {} : { commandTimeoutMs: inherited });
  if (from instanceof Redis) return from.duplicate(ofRole);
  // Cluster#duplicate(startupNodes, options): node options live in `redisOptions`, where BullMQ looks too.
  return from.duplicate([], {
    redisOptions: { ...from.options.redisOptions, ...ofRole },
    shardedSubscribers: role === 'subscriber',
  }) as unknown as Redis;
}

/**
 * Opens a Redis connection for one role: from connection options (or a bare URL), or as a duplicate of an
 * existing connection (same server and options, with the role's own). The one place where taskgate creates
 * connections. `onError` hears the connection's errors (else they are unhandled).
 */
export function createRedisConnection(
  from: string | RedisConnectionOptions | Redis,
  role: RedisRole,
  onError?: (error: Error) => void,
): Redis {
  const redis =
    typeof from === 'string'
      ? open({ url: from }, role)
      : from instanceof Redis || from instanceof Cluster
        ? duplicate(from, role)
        : open(from, role);
  const policy =
    typeof from === 'string' ? undefined : isRedisConnection(from) ? waitPolicyOf(from) : from.waitReplicas;
  if (policy !== undefined) waitPolicies.set(redis, policy);
  // The subscriber's commands are batched by the event bus already; the invalidations' are two per connect.
  if (role === 'command' || role === 'bullmq-worker') batchWrites(redis);
  // Connection errors are retried by ioredis; `onError` only reports them.
  if (onError !== undefined) redis.on('error', onError);
  return redis;
}

/** Is this a Redis Cluster connection (keys spread over shards; shard channels use sharded pub/sub)? */
export function isClusterConnection(redis: Redis): boolean {
  const connection: unknown = redis;
  return connection instanceof Cluster;
}

/** The command that publishes on a shard channel over this connection: SPUBLISH on a cluster, else PUBLISH. */
export function shardPublishCommand(redis: Redis): 'spublish' | 'publish' {
  return isClusterConnection(redis) ? 'spublish' : 'publish';
}

/** Is this a connection (rather than options to open one)? */
export function isRedisConnection(value: unknown): value is Redis {
  return value instanceof Redis || value instanceof Cluster;
}
