import { createRedisConnection, type RedisConnectionOptions } from '@taskgate/core';
import { type RedisClusterSet, startRedisCluster, waitFor } from '@taskgate/test-harness';
import { Cluster, type Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// Core's connection factory against the harness's Redis Cluster: every role opens an ioredis Cluster reading from
// masters, a duplicate keeps the cluster and takes its own role's node options (BullMQ reads them from
// `redisOptions`), and the subscriber role carries sharded pub/sub beside classic channels.

let cluster: RedisClusterSet;
let options: RedisConnectionOptions;
const opened: Redis[] = [];

function open(from: RedisConnectionOptions | Redis, role: Parameters<typeof createRedisConnection>[1]): Redis {
  const connection = createRedisConnection(from, role, () => {});
  opened.push(connection);
  return connection;
}

async function ready(connection: Redis): Promise<void> {
  if (connection.status !== 'ready') await new Promise((resolve) => connection.once('ready', resolve));
}

const asCluster = (connection: Redis): Cluster => connection as unknown as Cluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
  options = {
    url: 'redis://',
    clusterNodes: cluster.nodesSetting
      .split(',')
      .map((node) => ({ host: '127.0.0.1', port: Number(node.split(':')[1]) })),
  };
}, 30_000);

afterAll(async () => {
  for (const connection of opened) connection.disconnect();
  await cluster?.stop();
});

describe('createRedisConnection on a Redis Cluster', () => {
  it('opens a Cluster that reads from masters and writes keys of every shard', async () => {
    const command = open(options, 'command');
    expect(command).toBeInstanceOf(Cluster);
    expect(asCluster(command).options).toMatchObject({ enableReadyCheck: true, scaleReads: 'master' });
    await ready(command);
    const masters = new Set<number>();
    for (let index = 0; masters.size < 3 && index < 100; index++) {
      const key = `{conn${index}}:value`;
      expect(await command.set(key, String(index))).toBe('OK');
      expect(await command.get(key)).toBe(String(index));
      masters.add(await cluster.masterOfKey(key));
    }
    expect(masters.size).toBe(3);
  });

  it('gives a BullMQ worker connection, opened or duplicated, maxRetriesPerRequest null on every node; producers fail fast', async () => {
    const opened = open(options, 'bullmq-worker');
    expect(asCluster(opened).options.redisOptions?.maxRetriesPerRequest).toBeNull();
    const command = open(options, 'command');
    // The commands connection (producers) gives up after a few reconnects instead of waiting forever.
    expect(asCluster(command).options.redisOptions?.maxRetriesPerRequest).toBe(3);
    const duplicated = open(command, 'bullmq-worker');
    expect(duplicated).toBeInstanceOf(Cluster);
    expect(asCluster(duplicated).options.redisOptions?.maxRetriesPerRequest).toBeNull();
    expect(asCluster(duplicated).options.scaleReads).toBe('master');
    await ready(duplicated);
    expect(await duplicated.set('{dup}:value', 'x')).toBe('OK');
    expect(await command.get('{dup}:value')).toBe('x');
  });

  it('delivers sharded and classic messages to a subscriber duplicated from the commands connection', async () => {
    const command = open(options, 'command');
    const subscriber = open(command, 'subscriber');
    expect(asCluster(subscriber).options.shardedSubscribers).toBe(true);
    expect(asCluster(command).options.shardedSubscribers).toBeFalsy();
    await Promise.all([ready(command), ready(subscriber)]);
    const received: string[] = [];
    subscriber.on('smessage', (channel: string, message: string) => received.push(`${channel} ${message}`));
    subscriber.on('message', (channel: string, message: string) => received.push(`${channel} ${message}`));
    const sharded = ['{shard-a}:events', '{shard-b}:events', '{shard-c}:events'];
    for (const channel of sharded) await subscriber.ssubscribe(channel);
    await subscriber.subscribe('process-wide');
    for (const channel of sharded) expect(await command.spublish(channel, 'sharded')).toBe(1);
    await command.publish('process-wide', 'classic');
    await waitFor(() => received.length === 4, 'three sharded messages and a classic one', 5_000);
    expect(received.sort()).toEqual([...sharded.map((channel) => `${channel} sharded`), 'process-wide classic'].sort());
  });
});
