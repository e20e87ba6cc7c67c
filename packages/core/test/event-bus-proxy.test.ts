import { startPersistentRedis, startTcpRelay } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { afterEach, describe, expect, it } from 'vitest';
import { EventBus, Keys } from '../src/index.js';
import { waitFor } from './support.js';

const within = <T>(promise: Promise<T>, ms: number): Promise<T | 'timed out'> =>
  Promise.race([promise, new Promise<'timed out'>((resolve) => setTimeout(() => resolve('timed out'), ms))]);

describe('EventBus behind a proxy that accepts connections while Redis is down', () => {
  const cleanups: Array<() => Promise<unknown>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup().catch(() => {});
  });

  it('keeps its subscriptions and subscribes new channels once Redis is back', async () => {
    const redis = await startPersistentRedis();
    cleanups.push(() => redis.stop());
    // Like most load balancers, the relay accepts connections and drops them while Redis is down.
    const proxy = await startTcpRelay(redis.port);
    cleanups.push(() => proxy.close());
    // A gateway's command connection (it fails fast); the bus makes its subscriber connection from it.
    const base = new Redis({ port: proxy.port, host: '127.0.0.1', maxRetriesPerRequest: 3, commandTimeout: 5000 });
    base.on('error', () => {});
    cleanups.push(async () => base.disconnect());
    const keys = new Keys('bus-proxy');
    const bus = new EventBus(base, keys);
    cleanups.push(() => bus.close());
    const received: string[] = [];
    await bus.onTaskChange('before', (message) => received.push(`before:${message}`));

    await redis.kill();
    // Subscribed while every reconnect is accepted and dropped, then while Redis comes back.
    const during = Array.from({ length: 6 }, (_, i) =>
      new Promise((resolve) => setTimeout(resolve, i * 100)).then(() =>
        bus
          .onTaskChange(`during${i}`, (message) => received.push(`during${i}:${message}`))
          .then(
            () => 'live',
            () => 'failed',
          ),
      ),
    );
    await new Promise((resolve) => setTimeout(resolve, 1000));
    await redis.restart();
    const outcomes = await Promise.all(during.map((subscribed) => within(subscribed, 10_000)));
    expect(outcomes).not.toContain('timed out');
    const after = await within(
      bus.onTaskChange('after', (message) => received.push(`after:${message}`)).then(() => 'live'),
      10_000,
    );
    expect(after).toBe('live');

    const publisher = new Redis({ port: redis.port, host: '127.0.0.1' });
    cleanups.push(async () => publisher.disconnect());
    const live = ['before', 'after', ...outcomes.flatMap((outcome, i) => (outcome === 'live' ? [`during${i}`] : []))];
    // The subscriptions that came back are live on the server, and messages reach their listeners.
    await waitFor(async () => {
      for (const name of live) await publisher.publish(keys.taskChannel(name), 'x');
      return live.every((name) => received.includes(`${name}:x`));
    }, 'a message on every live channel').catch(() => undefined);
    expect(live.filter((name) => !received.includes(`${name}:x`))).toEqual([]);
    expect(live.length).toBeGreaterThanOrEqual(2);
  }, 40_000);
});
