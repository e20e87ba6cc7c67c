import { freePort, startRedis } from '@taskgate/test-harness';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisConnection, isRedisUnavailable } from '../src/index.js';

/** The error a command rejects with. */
async function failure(command: Promise<unknown>): Promise<unknown> {
  return await command.then(
    () => undefined,
    (error: unknown) => error,
  );
}

describe('a Redis that does not answer', () => {
  it('a command connection fails its commands within commandTimeoutMs on a frozen server; other roles wait', async () => {
    await using server = await startRedis();
    const commands = createRedisConnection({ url: server.url, commandTimeoutMs: 300 }, 'command', () => {});
    const worker = createRedisConnection(commands, 'bullmq-worker', () => {});
    const twin = createRedisConnection(commands, 'command', () => {});
    try {
      await commands.ping();
      await worker.ping();
      expect(commands.options.commandTimeout).toBe(300);
      // Its duplicates for blocking roles drop the timeout; a command duplicate keeps it.
      expect(worker.options.commandTimeout).toBeUndefined();
      expect(twin.options.commandTimeout).toBe(300);
      process.kill(server.pid, 'SIGSTOP');
      const started = Date.now();
      const error = await failure(commands.get('k'));
      const elapsed = Date.now() - started;
      const waiting = worker.get('k');
      process.kill(server.pid, 'SIGCONT');
      expect((error as Error).message).toBe('Command timed out');
      expect(isRedisUnavailable(error)).toBe(true);
      expect(elapsed).toBeGreaterThanOrEqual(250);
      expect(elapsed).toBeLessThan(2000);
      expect(await waiting).toBeNull();
    } finally {
      process.kill(server.pid, 'SIGCONT');
      for (const connection of [commands, worker, twin]) connection.disconnect();
    }
  });

  it('a refused connection is unavailable; a wrong command or another error is not', async () => {
    const port = await freePort();
    const refused: Redis = createRedisConnection(`redis://127.0.0.1:${port}`, 'command', () => {});
    const error = await failure(refused.get('k'));
    refused.disconnect();
    expect((error as Error).name).toBe('MaxRetriesPerRequestError');
    expect(isRedisUnavailable(error)).toBe(true);
    expect(isRedisUnavailable(new Error('wrapped', { cause: error }))).toBe(true);

    await using server = await startRedis();
    const redis = createRedisConnection(server.url, 'command', () => {});
    try {
      const wrong = await failure(redis.call('NO-SUCH-COMMAND'));
      expect((wrong as Error).message).toMatch(/unknown command/);
      expect(isRedisUnavailable(wrong)).toBe(false);
      expect(isRedisUnavailable(new Error('Internal error'))).toBe(false);
      expect(isRedisUnavailable('Command timed out')).toBe(false);
    } finally {
      redis.disconnect();
    }
  });

  it('a write to a node a failover made a replica (READONLY) is unavailable: retried once the primary moved', async () => {
    await using primary = await startRedis();
    await using replica = await startRedis();
    const redis = createRedisConnection(replica.url, 'command', () => {});
    try {
      await redis.call('REPLICAOF', '127.0.0.1', String(new URL(primary.url).port));
      const error = await failure(redis.set('k', 'v'));
      expect((error as Error).message).toMatch(/^READONLY /);
      expect(isRedisUnavailable(error)).toBe(true);
      // What ioredis rejects a command in flight with when its connection closed under it (a failover's cut).
      expect(isRedisUnavailable(new Error('Command aborted due to connection close'))).toBe(true);
    } finally {
      redis.disconnect();
    }
  });
});
