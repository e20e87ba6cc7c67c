import { startRedis, useRedis } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';

describe('test harness', () => {
  const redis = useRedis();

  it('gives every test a private server and a fresh prefix', async () => {
    const client = redis.connect();
    expect(await client.ping()).toBe('PONG');
    expect(redis.prefix).toMatch(/^t[0-9a-f]{12}$/);
    expect(redis.url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
  });

  it('stops a server by its pid', async () => {
    const server = await startRedis();
    expect(() => process.kill(server.pid, 0)).not.toThrow();
    await server.stop();
    expect(() => process.kill(server.pid, 0)).toThrow();
    const client = new Redis({
      port: server.port,
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    client.on('error', () => {});
    await expect(client.connect()).rejects.toThrow();
    client.disconnect();
  });
});
