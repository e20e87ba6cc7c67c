import { startRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisConnection } from '../src/index.js';
import { TurnBatch } from '../src/redis/turn-batch.js';
import { onSocketWrite } from './support.js';

/** Counts the pipelines the connection makes. */
function countPipelines(redis: Redis): { readonly count: () => number } {
  const original = redis.pipeline.bind(redis);
  let made = 0;
  redis.pipeline = ((...args: Parameters<Redis['pipeline']>) => {
    made += 1;
    return original(...args);
  }) as Redis['pipeline'];
  return { count: () => made };
}

describe('reads batched by the microtask run that asked for them', () => {
  it('the reads of one run go out as one pipeline per slot tag (a lone read as itself), each with its own reply', async () => {
    await using server = await startRedis();
    const redis = createRedisConnection(server.url, 'command', () => {});
    try {
      await redis.hset('{a}:one', 'status', 'working');
      await redis.hset('{a}:two', 'status', 'completed');
      await redis.hset('{b}:three', 'status', 'failed');
      const pipelines = countPipelines(redis);
      const batch = new TurnBatch(redis);
      const replies = await Promise.all([
        batch.hmget('{a}', '{a}:one', ['status', 'missing']),
        batch.hmget('{a}', '{a}:two', ['status']),
        batch.hmget('{b}', '{b}:three', ['status']),
        batch.hmget('{a}', '{a}:none', ['status']),
      ]);
      expect(replies).toEqual([['working', null], ['completed'], ['failed'], [null]]);
      // {a}'s three reads in one pipeline; {b}'s one read needs none.
      expect(pipelines.count()).toBe(1);
      await expect(batch.hmget('{b}', '{b}:three', ['status'])).resolves.toEqual(['failed']);
      await expect(batch.hmget('{b}', '{b}:none', ['status'])).resolves.toEqual([null]);
      expect(pipelines.count()).toBe(1);
    } finally {
      redis.disconnect();
    }
  });

  it('a read asked for in a reply callback leaves in that turn of the event loop, not the next', async () => {
    await using server = await startRedis();
    const redis = createRedisConnection(server.url, 'command', () => {});
    try {
      await redis.hset('{a}:one', 'status', 'working');
      const events: string[] = [];
      onSocketWrite(redis, () => events.push('write'));
      const batch = new TurnBatch(redis);
      // Asked for where a woken waiter asks: in the continuation of a reply (the poll phase of a turn). An
      // immediate queued just before the read, and one that queues another: the second runs in the next turn.
      const read = redis.ping().then(() => {
        setImmediate(() => {
          events.push('this turn');
          setImmediate(() => events.push('next turn'));
        });
        return batch.hmget('{a}', '{a}:one', ['status']);
      });
      await expect(read).resolves.toEqual(['working']);
      await new Promise((resolve) => setImmediate(resolve));
      // The ping's own write came first; the read's write is in the turn that asked for it.
      expect(events.slice(1)).toEqual(['this turn', 'write', 'next turn']);
    } finally {
      redis.disconnect();
    }
  });
});
