import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  EventBus,
  InputRequests,
  Keys,
  ListCursorCodec,
  SessionStore,
  TaskOutbox,
  TaskStore,
  ToolCatalog,
  ToolQueues,
} from '@taskgate/core';
import type { Express } from 'express';
import { Redis } from 'ioredis';
import { buildApp } from './http/app.js';
import { type GatewayOptions, resolveGatewayOptions } from './options.js';
import { ArgumentValidator } from './rpc/argument-validator.js';
import type { GatewayServices } from './rpc/context.js';
import { StreamRegistry } from './sse/stream-registry.js';
import { OutboxRelay } from './tasks/outbox-relay.js';
import { TaskWatcher } from './tasks/task-watcher.js';

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
  /** Serves the app on `host:port` (port 0 picks a free one). Default host 127.0.0.1. */
  listen(port?: number, host?: string): Promise<GatewayAddress>;
  /**
   * Stops taking connections, ends GET and tasks/result streams (clients reconnect elsewhere; tasks keep
   * running), lets direct calls finish for up to `drainTimeoutMs`, then closes its Redis connections.
   */
  close(): Promise<void>;
}

/** Creates a stateless gateway pod: everything it knows about sessions and tasks lives in Redis. */
export function createGateway(input: GatewayOptions): Gateway {
  const options = resolveGatewayOptions(input);
  const ownsRedis = typeof input.redis === 'string';
  const redis = typeof input.redis === 'string' ? new Redis(input.redis) : input.redis;
  // Connection errors are retried by ioredis; requests that need Redis fail with -32603 meanwhile.
  if (ownsRedis)
    redis.on('error', (error: Error) => options.logger.warn({ err: error.message }, 'redis connection error'));
  const keys = new Keys(options.keyPrefix);
  const tasks = new TaskStore({ redis, keys, cursorSecret: options.cursorSecret, limits: options.limits });
  const bus = new EventBus(redis);
  const outbox = new TaskOutbox({ redis, keys });
  const services: GatewayServices = {
    options,
    logger: options.logger,
    keys,
    redis,
    tasks,
    sessions: new SessionStore({ redis, keys, idleTtlMs: options.sessionIdleTtlMs }),
    catalog: new ToolCatalog({ redis, keys, staleAfterMs: options.toolStaleAfterMs }),
    queues: new ToolQueues({ connection: redis, keys }),
    bus,
    outbox,
    inputs: new InputRequests({ redis, bus, keys }),
    watcher: new TaskWatcher(bus, tasks, keys),
    relay: new OutboxRelay(bus, outbox, keys),
    validator: new ArgumentValidator(),
    streams: new StreamRegistry(),
    toolCursors: new ListCursorCodec(options.cursorSecret, tasks.limits.cursorTtlMs),
    pollMs: tasks.limits.pollIntervalMs > 0 ? tasks.limits.pollIntervalMs : 1000,
  };

  let closing = false;
  let server: Server | undefined;
  const app = buildApp(services, {
    // Not ready while shutting down, or when Redis does not answer within a second.
    ready: async () => {
      if (closing) return false;
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<string>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), 1000);
      });
      const reply = await Promise.race([redis.ping().catch(() => 'error'), timeout]).finally(() => clearTimeout(timer));
      return reply === 'PONG';
    },
  });

  const listen = (port = 0, host = '127.0.0.1'): Promise<GatewayAddress> =>
    new Promise((resolve, reject) => {
      if (server !== undefined) return reject(new Error('The gateway is listening already'));
      const http = createServer(app);
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

  let closed: Promise<void> | undefined;
  const close = (): Promise<void> => {
    closed ??= (async () => {
      closing = true;
      const stopped = new Promise<void>((resolve) => {
        if (server === undefined) return resolve();
        server.close(() => resolve());
      });
      services.streams.endAll(['session', 'result']);
      await services.streams.settled('direct', options.drainTimeoutMs);
      services.streams.endAll(['direct']);
      server?.closeAllConnections();
      await stopped;
      await Promise.allSettled([bus.close(), services.queues.close()]);
      if (ownsRedis) await redis.quit().catch(() => redis.disconnect());
      options.logger.info({}, 'gateway closed');
    })();
    return closed;
  };

  return { app, listen, close };
}
