import type { Socket } from 'node:net';
import { startRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisConnection } from '../src/index.js';
import { onSocketWrite } from './support.js';

/** Counts the socket writes (system calls) of the connection's socket. */
function countWrites(redis: Redis): { readonly count: () => number } {
  let writes = 0;
  onSocketWrite(redis, () => {
    writes += 1;
  });
  return { count: () => writes };
}

const waitFor = async (check: () => boolean): Promise<void> => {
  const until = Date.now() + 5000;
  while (!check()) {
    if (Date.now() > until) throw new Error('timed out');
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
};

describe('batched writes of a connection', () => {
  it('the commands of one turn of the event loop leave in one socket write, each with its own reply', async () => {
    await using server = await startRedis();
    for (const role of ['command', 'bullmq-worker'] as const) {
      const redis = createRedisConnection(server.url, role, () => {});
      try {
        await redis.ping();
        const writes = countWrites(redis);
        const replies = await Promise.all(
          Array.from({ length: 20 }, (_, i) => redis.set(`k${i}`, `v${i}`).then(() => redis.get(`k${i}`))),
        );
        expect(replies).toEqual(Array.from({ length: 20 }, (_, i) => `v${i}`));
        // 20 SETs in the first turn, 20 GETs in the turn their replies arrived in (one read of the socket).
        expect(writes.count()).toBeLessThanOrEqual(3);
        expect(writes.count()).toBeGreaterThanOrEqual(1);
        // A lone command of a later turn still leaves at once.
        const before = writes.count();
        expect(await redis.incr(`n-${role}`)).toBe(1);
        expect(writes.count()).toBe(before + 1);
      } finally {
        redis.disconnect();
      }
    }
  });

  it('a reconnected connection batches its new socket too', async () => {
    await using server = await startRedis();
    const redis = createRedisConnection(server.url, 'command', () => {});
    try {
      await redis.ping();
      const first = (redis as unknown as { stream: Socket }).stream;
      first.destroy();
      await waitFor(() => (redis as unknown as { stream: Socket }).stream !== first && redis.status === 'ready');
      const writes = countWrites(redis);
      const replies = await Promise.all(Array.from({ length: 10 }, (_, i) => redis.echo(`e${i}`)));
      expect(replies).toEqual(Array.from({ length: 10 }, (_, i) => `e${i}`));
      expect(writes.count()).toBe(1);
    } finally {
      redis.disconnect();
    }
  });
});
