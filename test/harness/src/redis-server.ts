import { type RedisServer, type StartRedisOptions, startRedisServer } from '@taskgate/core';

export { assertRedisServerAvailable, freePort, type RedisServer, type StartRedisOptions } from '@taskgate/core';

/** Starts a private, persistence-free `redis-server` on a free loopback port (a temporary directory, removed on stop). */
export function startRedis(options: Omit<StartRedisOptions, 'dir' | 'appendOnly'> = {}): Promise<RedisServer> {
  return startRedisServer(options);
}

/**
 * Starts a private `redis-server` whose data lives in `dir` as an append-only file with `appendfsync always`
 * (the directory is kept on stop). `stop` kills it with SIGKILL; started again with the same `dir` and `port`,
 * it comes back with every write it acknowledged.
 */
export function startDurableRedis(
  dir: string,
  options: Omit<StartRedisOptions, 'dir' | 'appendOnly'> = {},
): Promise<RedisServer> {
  return startRedisServer({ ...options, dir, appendOnly: true });
}
