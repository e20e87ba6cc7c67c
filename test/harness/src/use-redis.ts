import { Redis, type RedisOptions } from 'ioredis';
import { afterAll, afterEach, beforeAll, beforeEach } from 'vitest';
import { uniquePrefix } from './prefix.js';
import { type RedisServer, startRedis } from './redis-server.js';

/** What `useRedis()` gives each test: the file's private server and this test's own key prefix. */
export interface RedisFixture {
  readonly server: RedisServer;
  readonly url: string;
  /** A fresh prefix for the current test (changes before every test). */
  readonly prefix: string;
  /** A new ioredis connection to the server, closed after the current test. */
  connect(options?: Omit<RedisOptions, 'replyMapping'>): Redis;
}

/**
 * Starts one private redis-server for the calling test file (stopped by pid after the file) and gives every
 * test its own key prefix. Connections opened with `connect()` are closed after each test.
 */
export function useRedis(): RedisFixture {
  let server: RedisServer | undefined;
  let prefix = '';
  const open: Redis[] = [];

  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });
  beforeEach(() => {
    prefix = uniquePrefix();
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((client) => client.quit().catch(() => client.disconnect())));
  });

  const required = (): RedisServer => {
    if (server === undefined) throw new Error('useRedis(): the server starts in beforeAll; use it inside a test');
    return server;
  };
  return {
    get server() {
      return required();
    },
    get url() {
      return required().url;
    },
    get prefix() {
      return prefix;
    },
    connect(options: Omit<RedisOptions, 'replyMapping'> = {}) {
      const { port, host } = required();
      const client = new Redis({ port, host, maxRetriesPerRequest: null, ...options });
      open.push(client);
      return client;
    },
  };
}
