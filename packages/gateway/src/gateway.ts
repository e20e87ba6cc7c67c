import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  AdminTasks,
  catalogQueues,
  closeRedis,
  createRedisConnection,
  DirectCalls,
  EventBus,
  EventLog,
  ensureScriptsLoaded,
  errorMessage,
  GatewayRegistry,
  InputRequests,
  isRedisConnection,
  Keys,
  ListCursorCodec,
  OfferingCatalog,
  podName,
  ResourceSubscriptions,
  SessionCache,
  SessionFeed,
  SessionStore,
  TaskDelivery,
  TaskFollower,
  TaskgateError,
  TaskOutbox,
  TaskStore,
  TaskTrail,
  ToolCatalog,
  ToolQueues,
  taskMetrics,
  WorkerRegistry,
  watchQueues,
  watchRedis,
} from '@taskgate/core';
import type { Express } from 'express';
import { Registry } from 'prom-client';
import { buildAdminApp } from './admin/admin-app.js';
import { AdminAuth } from './admin/admin-auth.js';
import { type AppServices, buildApp, messageClassesOf } from './http/app.js';
import { answerClientError } from './http/client-error.js';
import type { Readiness } from './http/drain.js';
import { ArgumentValidator } from './methods/argument-validator.js';
import { GatewayMetrics } from './ops/gateway-metrics.js';
import { LazyLogger } from './ops/lazy-logger.js';
import { RateLimits } from './ops/rate-limits.js';
import { StreamQuota } from './ops/stream-quota.js';
import { type GatewayOptions, resolveGatewayOptions } from './options.js';
import { HeldStreams } from './streams/held-streams.js';
import { QuietIds } from './streams/quiet-id.js';
import { StreamRegistry } from './streams/stream-registry.js';

/**
 * The composition root's services: every process-wide piece a gateway builds (nothing per session), handed to
 * the HTTP layer. Only this file names the whole; the runner, the codecs, each handler and stream name their part.
 */
type GatewayServices = AppServices;

/** Where a started gateway listens. */
export interface GatewayAddress {
  readonly host: string;
  readonly port: number;
  /** The MCP endpoint, e.g. `http://127.0.0.1:3000/mcp`. */
  readonly url: string;
}

/** A gateway: the express app, a way to serve it, and a graceful shutdown. */
export interface Gateway {
  /** Mount it yourself, or call `listen`. */
  readonly app: Express;
  /** The Prometheus registry holding this gateway's metrics (served at `/metrics`). */
  readonly metrics: Registry;
  /** Serves the app on `host:port` (port 0 picks a free one). Default host 127.0.0.1. */
  listen(port?: number, host?: string): Promise<GatewayAddress>;
  /**
   * Serves the admin listener (operator console at `/admin/`, admin API at `/admin/api`, BullMQ's raw queues at
   * `/admin/queues`) on a port of its own, never the MCP port; needs `adminToken`. Default host 127.0.0.1.
   */
  listenAdmin(port?: number, host?: string): Promise<GatewayAddress>;
  /**
   * Drains and stops: readiness off and new MCP requests refused with 503 + Retry-After at once; GET and
   * tasks/result streams end with an SSE `retry` hint (clients resume on another pod; tasks keep running);
   * direct calls may finish for up to `drainTimeoutMs`; then the listener and Redis connections close.
   */
  close(): Promise<void>;
}

/** Waits at most `ms` for `work`; false when it failed or took longer. */
async function within(ms: number, work: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  const done = work.then(
    () => true,
    () => false,
  );
  return await Promise.race([done, timeout]).finally(() => clearTimeout(timer));
}

/** Creates a stateless gateway pod: everything it knows about sessions and tasks lives in Redis. */
export function createGateway(input: GatewayOptions): Gateway {
  const options = resolveGatewayOptions(input);
  const ownsRedis = !isRedisConnection(input.redis);
  // Connection errors are retried by ioredis; requests that need Redis fail with -32603 meanwhile.
  const redis = isRedisConnection(input.redis)
    ? input.redis
    : createRedisConnection(input.redis, 'command', (error) =>
        options.logger.warn({ err: error.message }, 'redis connection error'),
      );
  const registry = input.metrics ?? new Registry();
  const keys = new Keys(options.keyPrefix);
  const tasks = new TaskStore({
    redis,
    keys,
    cursorSecret: options.cursorSecret,
    limits: options.limits,
    observer: taskMetrics(registry),
    // The trail records which pod created (or cancelled) each task: the operator console's timeline.
    pod: podName(),
  });
  const bus = new EventBus(redis, keys);
  const outbox = new TaskOutbox({ redis, keys });
  const streams = new StreamRegistry({ heartbeatMs: options.sseHeartbeatMs });
  const metrics = new GatewayMetrics(registry, options, tasks.limits, streams);
  // tools/call reads its tool from memory for a moment; a change the workers announce clears it at once.
  const catalog = new ToolCatalog({
    redis,
    keys,
    staleAfterMs: options.toolStaleAfterMs,
    cacheMs: options.toolCacheMs,
  });
  const forgetTools = bus.onReconnect(() => catalog.invalidate());
  bus
    .onCatalogChange('tools', () => catalog.invalidate())
    .catch((error: unknown) => {
      options.logger.warn({ err: errorMessage(error) }, 'no subscription to tool changes: the tool cache only expires');
    });
  const queues = new ToolQueues({ connection: redis, keys });
  const events = new EventLog({
    redis,
    keys,
    maxEvents: options.eventLogMaxEvents,
    retentionMs: options.eventLogRetentionMs,
  });
  const delivery = new TaskDelivery({ redis, keys });
  const held = new HeldStreams({
    registry: new GatewayRegistry({ redis, keys, gatewayId: GatewayRegistry.newId() }),
    events,
    delivery,
    streams,
    beatMs: options.sseHeartbeatMs,
    deadAfterMs: options.sseHeartbeatMs * 3,
    retryMs: options.drainRetryAfterMs,
    logger: options.logger,
  });
  // A busy session's requests read it from memory; Redis tells this process when one changes (not on a Cluster).
  const sessionCache = SessionCache.open({
    redis,
    onSetUpFailed: (error) =>
      options.logger.warn({ err: errorMessage(error) }, 'session cache not set up: sessions are read from Redis'),
  });
  const services: GatewayServices = {
    options,
    // Request loggers (children) are made when they first log: most requests, and waiting streams, never do.
    logger: LazyLogger.wrap(options.logger),
    tasks,
    calls: new DirectCalls({ redis, keys }),
    sessions: new SessionStore({
      redis,
      keys,
      idleTtlMs: options.sessionIdleTtlMs,
      maxPerPrincipal: options.maxSessionsPerPrincipal,
      ...(sessionCache !== undefined && { cache: sessionCache }),
    }),
    catalog,
    offerings: new OfferingCatalog({ redis, keys, staleAfterMs: options.toolStaleAfterMs }),
    subscriptions: new ResourceSubscriptions({ redis, keys, idleTtlMs: options.sessionIdleTtlMs }),
    queues,
    bus,
    outbox,
    inputs: new InputRequests({ redis, bus, keys }),
    follower: new TaskFollower({ bus, store: tasks, safetyMs: options.waiterSafetyMs }),
    events,
    delivery,
    feed: new SessionFeed({ redis, keys }),
    validator: new ArgumentValidator(),
    streams,
    held,
    quietIds: new QuietIds(options.cursorSecret),
    toolCursors: new ListCursorCodec(options.cursorSecret, tasks.limits.cursorTtlMs),
    metrics,
    rateLimits: new RateLimits(redis, keys, options, metrics),
    streamQuota: new StreamQuota(options.maxStreamsPerPrincipal),
  };
  const unwatch = [
    watchRedis(registry, redis, 'commands'),
    watchRedis(registry, bus.connection, 'subscriber'),
    ...(sessionCache === undefined ? [] : [watchRedis(registry, sessionCache.connection, 'invalidations')]),
    // Every queue (every shard) of the live catalog: a gateway sees all tools, a worker only its own.
    watchQueues(registry, async () => catalogQueues(await catalog.list()).map((name) => queues.queue(name))),
  ];

  let draining = false;
  let server: Server | undefined;
  let adminServer: Server | undefined;
  const readiness: Readiness = {
    get draining() {
      return draining;
    },
    // Ready when not draining and Redis answers within a second with every script in its cache.
    state: async () => {
      if (draining) return 'draining';
      return (await within(1000, ensureScriptsLoaded(redis))) ? 'ready' : 'unavailable';
    },
  };
  const app = buildApp(services, readiness);
  const messageClasses = messageClassesOf(app);

  const listen = (port = 0, host = '127.0.0.1'): Promise<GatewayAddress> =>
    new Promise((resolve, reject) => {
      if (server !== undefined) return reject(new Error('The gateway is listening already'));
      // Slow headers (slowloris) get 408 and a closed socket after headersTimeoutMs; Node checks every connection
      // on an interval (30 s by default), so a short timeout is checked more often.
      const checkMs = Math.min(30_000, Math.max(100, Math.floor(options.headersTimeoutMs / 4)));
      const http = createServer({ connectionsCheckingInterval: checkMs, ...messageClasses }, app);
      http.headersTimeout = options.headersTimeoutMs;
      http.requestTimeout = Math.max(http.requestTimeout, options.headersTimeoutMs);
      http.on('clientError', answerClientError);
      server = http;
      http.once('error', reject);
      http.listen(port, host, () => {
        http.off('error', reject);
        const address = http.address() as AddressInfo;
        const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        const url = `http://${shown}:${address.port}${options.path}`;
        options.logger.info({ url }, 'gateway listening');
        resolve({ host: address.address, port: address.port, url });
      });
    });

  const listenAdmin = (port = 0, host = '127.0.0.1'): Promise<GatewayAddress> =>
    new Promise((resolve, reject) => {
      if (options.adminToken === undefined) {
        return reject(new TaskgateError('INVALID_CONFIG', 'The admin listener needs an admin token (adminToken)'));
      }
      if (adminServer !== undefined) return reject(new Error('The admin listener is listening already'));
      const adminApp = buildAdminApp({
        auth: new AdminAuth(options.adminToken),
        admin: new AdminTasks({ redis, keys, tasks, outbox, trail: new TaskTrail(redis, keys), catalog, queues }),
        catalog,
        queues,
        workers: new WorkerRegistry(redis, keys),
        bus,
        heartbeatMs: options.sseHeartbeatMs,
        logger: options.logger,
      });
      const http = createServer(adminApp);
      http.headersTimeout = options.headersTimeoutMs;
      adminServer = http;
      http.once('error', reject);
      http.listen(port, host, () => {
        http.off('error', reject);
        const address = http.address() as AddressInfo;
        const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
        const url = `http://${shown}:${address.port}/admin/`;
        options.logger.info({ url }, 'admin listener listening');
        resolve({ host: address.address, port: address.port, url });
      });
    });

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      draining = true;
      metrics.draining();
      options.logger.info({ drainTimeoutMs: options.drainTimeoutMs }, 'gateway draining');
      // The listener stays open while direct calls finish, so that late requests get a 503 with a retry hint
      // rather than a refused connection.
      services.streams.endAll(['session', 'result'], options.drainRetryAfterMs);
      // A tasks/result still waiting in the process opens its stream now, ended after its priming event.
      await services.streams.decided(2000);
      await services.streams.settled('direct', options.drainTimeoutMs);
      services.streams.endAll(['direct'], options.drainRetryAfterMs);
      const stopped = new Promise<void>((resolve) => {
        if (server === undefined) return resolve();
        server.close(() => resolve());
      });
      server?.closeAllConnections();
      await stopped;
      await new Promise<void>((resolve) => {
        if (adminServer === undefined) return resolve();
        adminServer.close(() => resolve());
        adminServer.closeAllConnections();
      });
      // Streams give their leases up (connection, carrier, GET stream) so that other pods take over at once.
      await services.streams.cleanedUp(2000);
      await held.stop();
      for (const stop of unwatch) stop();
      // The tools subscription ends with the bus.
      forgetTools();
      await Promise.allSettled([bus.close(), services.queues.close(), sessionCache?.close()]);
      if (ownsRedis) await closeRedis(redis);
      options.logger.info({}, 'gateway closed');
    })().catch((error: unknown) => {
      options.logger.error({ err: errorMessage(error) }, 'gateway close failed');
    });
    return closed;
  };

  return { app, metrics: registry, listen, listenAdmin, close };
}
