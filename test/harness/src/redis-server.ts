import { type RedisServer, type StartRedisOptions, startRedisServer } from '@taskgate/core';

export { assertRedisServerAvailable, freePort, type RedisServer, type StartRedisOptions } from '@taskgate/core';

/** Starts a private, persistence-free `redis-server` on a free loopback port (a temporary directory, removed on stop). */
export function startRedis(options: Omit<StartRedisOptions, 'dir'> = {}): Promise<RedisServer> {
  return startRedisServer(options);
}
