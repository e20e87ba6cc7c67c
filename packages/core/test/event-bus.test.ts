import { type RedisServer, startRedis, useRedis } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createRedisConnection, EventBus, Keys } from '../src/index.js';
import { sleep, waitFor } from './support.js';

/** Calls of one command since the server started (INFO commandstats). */
async function calls(conn: Redis, command: string): Promise<number> {
  const info = await conn.info('commandstats');
  return Number(new RegExp(`^cmdstat_${command}:calls=(\\d+)`, 'm').exec(info)?.[1] ?? 0);
}

/** Subscribers of a channel on the server (PUBSUB NUMSUB). */
async function numsub(conn: Redis, channel: string): Promise<number> {
  const reply = (await conn.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
  return Number(reply[1]);
}

describe('EventBus', () => {
  const redis = useRedis();

  /** A bus on a connection named after the test, so CLIENT LIST can pick out its connections. */
  const namedBus = () => {
    const name = `bus-${redis.prefix}`;
    return { name, bus: new EventBus(redis.connect({ connectionName: name }), new Keys(redis.prefix)) };
  };

  it('multiplexes many subscriptions over exactly one pub/sub connection', async () => {
    const { name, bus } = namedBus();
    const conn = redis.connect();
    try {
      const received = new Map<string, string[]>();
      const channels = Array.from({ length: 25 }, (_v, i) => `${redis.prefix}:ch:${i}`);
      await Promise.all(
        channels.flatMap((channel) =>
          [0, 1].map(() =>
            bus.subscribe(channel, (message) => received.set(channel, [...(received.get(channel) ?? []), message])),
          ),
        ),
      );
      expect(bus.channelCount).toBe(25);
      const clients = ((await conn.call('CLIENT', 'LIST')) as string)
        .split('\n')
        .filter((l) => l.includes(` name=${name} `));
      const pubsub = ((await conn.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string)
        .split('\n')
        .filter((l) => l.includes(` name=${name} `));
      // The bus's source connection plus one subscriber connection, which holds all 25 channels.
      expect(clients).toHaveLength(2);
      expect(pubsub).toHaveLength(1);
      expect(pubsub[0]).toMatch(/ sub=25 psub=0 /);
      for (const channel of channels) expect(await conn.publish(channel, `to ${channel}`)).toBe(1);
      await waitFor(() => channels.every((c) => received.get(c)?.length === 2), 'every listener receives');
      expect(channels.every((c) => received.get(c)!.every((m) => m === `to ${c}`))).toBe(true);
    } finally {
      await bus.close();
    }
    const after = ((await conn.call('CLIENT', 'LIST', 'TYPE', 'pubsub')) as string).split('\n');
    expect(after.filter((l) => l.includes(` name=${name} `))).toEqual([]);
    await expect(bus.subscribe('x', () => {})).rejects.toThrow('EventBus is closed');
  });

  it('reference-counts channels: one SUBSCRIBE for two listeners, UNSUBSCRIBE when the last one leaves', async () => {
    const { bus } = namedBus();
    const conn = redis.connect();
    const channel = `${redis.prefix}:ch:counted`;
    try {
      const subscribes = await calls(conn, 'subscribe');
      const unsubscribes = await calls(conn, 'unsubscribe');
      const first: string[] = [];
      const second: string[] = [];
      const [offFirst, offSecond] = await Promise.all([
        bus.subscribe(channel, (m) => first.push(m)),
        bus.subscribe(channel, (m) => second.push(m)),
      ]);
      expect(await calls(conn, 'subscribe')).toBe(subscribes + 1);
      expect(await numsub(conn, channel)).toBe(1);
      expect(await conn.publish(channel, 'one')).toBe(1);
      await waitFor(() => first.length === 1 && second.length === 1, 'both listeners get one');

      await offFirst();
      expect(bus.channelCount).toBe(1);
      expect(await numsub(conn, channel)).toBe(1);
      expect(await conn.publish(channel, 'two')).toBe(1);
      await waitFor(() => second.length === 2, 'the remaining listener gets two');
      // Dispatch is synchronous per message: had the removed listener still been there, it would have it now.
      expect(first).toEqual(['one']);
      expect(second).toEqual(['one', 'two']);

      await offSecond();
      await offSecond();
      await offFirst();
      expect(bus.channelCount).toBe(0);
      expect(await numsub(conn, channel)).toBe(0);
      expect(await calls(conn, 'unsubscribe')).toBe(unsubscribes + 1);
      expect(await conn.publish(channel, 'three')).toBe(0);

      // Subscribing again, even right after an unsubscribe, leaves the channel live.
      const third: string[] = [];
      const offThird = await bus.subscribe(channel, (m) => third.push(m));
      await offThird();
      const offAgain = await bus.subscribe(channel, (m) => third.push(m));
      expect(await numsub(conn, channel)).toBe(1);
      expect(await conn.publish(channel, 'four')).toBe(1);
      await waitFor(() => third.length === 1, 'the new listener gets four');
      expect(third).toEqual(['four']);
      await offAgain();
    } finally {
      await bus.close();
    }
  });

  it('subscribe() resolves only once the subscription is live on the server', async () => {
    const { bus } = namedBus();
    const conn = redis.connect();
    try {
      for (let i = 0; i < 30; i++) {
        const channel = `${redis.prefix}:ch:live:${i}`;
        const got: string[] = [];
        await bus.subscribe(channel, (m) => got.push(m));
        // PUBLISH answers how many subscribers received it: the bus's connection already counts.
        expect(await conn.publish(channel, `m${i}`)).toBe(1);
        await waitFor(() => got.length === 1, `message ${i}`);
        expect(got).toEqual([`m${i}`]);
      }
      // A second listener joining while the first SUBSCRIBE is in flight waits for the same confirmation.
      const channel = `${redis.prefix}:ch:joined`;
      const got: string[] = [];
      const first = bus.subscribe(channel, (m) => got.push(`a:${m}`));
      await bus.subscribe(channel, (m) => got.push(`b:${m}`));
      expect(await conn.publish(channel, 'x')).toBe(1);
      await first;
      await waitFor(() => got.length === 2, 'both listeners');
      expect(got.sort()).toEqual(['a:x', 'b:x']);
    } finally {
      await bus.close();
    }
  });

  it('a listener that throws does not keep the message from the others', async () => {
    const { bus } = namedBus();
    const conn = redis.connect();
    try {
      const channel = `${redis.prefix}:ch:faulty`;
      const other = `${redis.prefix}:ch:other`;
      const got: string[] = [];
      await bus.subscribe(channel, (m) => got.push(`before:${m}`));
      await bus.subscribe(channel, () => {
        throw new Error('listener bug');
      });
      await bus.subscribe(channel, (m) => got.push(`after:${m}`));
      await bus.subscribe(other, (m) => got.push(`other:${m}`));
      await conn.publish(channel, '1');
      await conn.publish(other, '2');
      await conn.publish(channel, '3');
      await waitFor(() => got.length === 5, 'all deliveries');
      expect(got).toEqual(['before:1', 'after:1', 'other:2', 'before:3', 'after:3']);
    } finally {
      await bus.close();
    }
  });
  it('a SUBSCRIBE sent while the subscriber connection is still connecting neither fails it nor is lost', async () => {
    const subscriber = createRedisConnection(redis.url, 'subscriber');
    const conn = redis.connect();
    const errors: string[] = [];
    let reconnects = 0;
    subscriber.on('error', (error: Error) => errors.push(error.message));
    subscriber.on('reconnecting', () => reconnects++);
    try {
      const received: string[] = [];
      subscriber.on('message', (_channel: string, message: string) => received.push(message));
      const channel = `${redis.prefix}:early`;
      // 'connect' is the moment ioredis writes commands but has not checked the server yet.
      await new Promise<void>((resolve, reject) => {
        subscriber.once('connect', () => {
          subscriber.subscribe(channel).then(() => resolve(), reject);
        });
      });
      await waitFor(() => subscriber.status === 'ready', 'the subscriber is ready');
      await conn.publish(channel, 'hello');
      await waitFor(() => received.length === 1, 'the message');
      // With a ready check, ioredis refuses its own INFO in subscriber mode and reconnects.
      expect(errors).toEqual([]);
      expect(reconnects).toBe(0);
      expect(received).toEqual(['hello']);
    } finally {
      subscriber.disconnect();
      conn.disconnect();
    }
  });
});

describe('EventBus across a Redis restart', () => {
  it('runs the reconnect hooks once subscriptions are back, and delivers again', async () => {
    let server: RedisServer | undefined = await startRedis();
    const port = server.port;
    const clients: Redis[] = [];
    const connect = () => {
      const client = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: null, retryStrategy: () => 25 });
      client.on('error', () => {});
      clients.push(client);
      return client;
    };
    const bus = new EventBus(connect(), new Keys());
    try {
      const got: string[] = [];
      await bus.subscribe('jobs', (m) => got.push(m));
      expect(await connect().publish('jobs', 'before')).toBe(1);
      await waitFor(() => got.length === 1, 'message before the restart');

      const events: string[] = [];
      bus.onReconnect(() => events.push('hook'));
      bus.onReconnect(() => {
        throw new Error('faulty hook');
      });
      const removeLate = bus.onReconnect(() => events.push('removed hook'));
      removeLate();
      // A hook that checks the subscription is live at the moment it runs.
      let liveWhenHookRan: Promise<number> | undefined;
      bus.onReconnect(() => {
        liveWhenHookRan ??= connect().publish('jobs', 'from hook');
      });

      await server.stop();
      server = undefined;
      // Subscribed while Redis is down: queued, and live after the reconnect.
      const late: string[] = [];
      const lateSubscribed = bus.subscribe('late', (m) => late.push(m));
      server = await startRedis({ port });

      await waitFor(() => events.length > 0, 'the reconnect hook', 10_000);
      expect(events).toEqual(['hook']);
      expect(await liveWhenHookRan).toBe(1);
      await lateSubscribed;
      const publisher = connect();
      expect(await publisher.publish('jobs', 'after')).toBe(1);
      expect(await publisher.publish('late', 'hello')).toBe(1);
      await waitFor(() => got.includes('after') && late.length === 1, 'messages after the restart');
      expect(got).toEqual(['before', 'from hook', 'after']);
      expect(late).toEqual(['hello']);
      expect(events).toEqual(['hook']);
    } finally {
      // With Redis down a QUIT would wait for the reconnect: give it a moment, then cut the sockets.
      await Promise.race([bus.close(), sleep(1000)]);
      for (const client of clients) client.disconnect();
      await server?.stop();
    }
  }, 20_000);
});

describe('EventBus after a failed SUBSCRIBE', () => {
  it('a SUBSCRIBE sent during an outage waits for Redis and is live once it is back', async () => {
    let server: RedisServer | undefined = await startRedis();
    const port = server.port;
    const conn = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 1, retryStrategy: () => 25 });
    conn.on('error', () => {});
    const publisher = new Redis({ port, host: '127.0.0.1', lazyConnect: true });
    const bus = new EventBus(conn, new Keys());
    let reconnects = 0;
    bus.onReconnect(() => reconnects++);
    try {
      await bus.subscribe('warm', () => {});
      await server.stop();
      server = undefined;
      // Let the connections notice the outage, so the SUBSCRIBE below waits in the offline queue.
      await waitFor(() => bus.connection.status === 'reconnecting', 'the disconnect');
      const got: string[] = [];
      let live = false;
      const subscribed = bus
        .subscribe('jobs', (m) => got.push(m))
        .then(() => {
          live = true;
        });
      // Far more failed reconnects than the command connection's maxRetriesPerRequest: it still waits.
      await sleep(300);
      expect(live).toBe(false);
      server = await startRedis({ port });
      await subscribed;
      await waitFor(() => reconnects === 1, 'the reconnect');
      expect(bus.channelCount).toBe(2);
      expect(await publisher.publish('jobs', 'hello')).toBe(1);
      expect(await publisher.publish('warm', 'again')).toBe(1);
      await waitFor(() => got.length === 1, 'the message after the outage');
      expect(got).toEqual(['hello']);
    } finally {
      await Promise.race([bus.close(), sleep(1000)]);
      conn.disconnect();
      publisher.disconnect();
      await server?.stop();
    }
  });
});
