import { execFileSync } from 'node:child_process';
import { type RedisClusterSet, startRedisCluster, waitFor } from '@taskgate/test-harness';
import { Cluster, Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

// The harness's Redis Cluster: three masters and three replicas on loopback, every slot covered; ioredis Cluster
// clients route keys and sharded channels to the shard owning them, and a killed master's replica takes over with
// the data written (and acknowledged by a replica) before.

let cluster: RedisClusterSet;
let client: Cluster;
const opened: (Cluster | Redis)[] = [];
let startedInMs = 0;

function seedNodes(): { host: string; port: number }[] {
  return cluster.nodesSetting.split(',').map((node) => {
    const [host = '', port = ''] = node.split(':');
    return { host, port: Number(port) };
  });
}

/** A cluster client as taskgate opens one (ready check, reads from masters), closed after the file. */
async function clusterClient(options: { shardedSubscribers?: boolean } = {}): Promise<Cluster> {
  const one = new Cluster(seedNodes(), { enableReadyCheck: true, scaleReads: 'master', ...options });
  one.on('error', () => {});
  opened.push(one);
  if (one.status !== 'ready') await new Promise((resolve) => one.once('ready', resolve));
  return one;
}

/** A plain connection to one node (no cluster routing: a command for another shard answers MOVED). */
function direct(port: number): Redis {
  const one = new Redis({ port, host: '127.0.0.1', maxRetriesPerRequest: 0, retryStrategy: () => null });
  one.on('error', () => {});
  opened.push(one);
  return one;
}

/** One key per master now, each of a different slot: `{label}:n` for the first labels that cover them. */
async function keyPerMaster(label: string): Promise<Map<number, string>> {
  const byMaster = new Map<number, string>();
  for (let index = 0; byMaster.size < 3 && index < 100; index++) {
    const key = `{${label}${index}}:value`;
    const master = await cluster.masterOfKey(key);
    if (!byMaster.has(master)) byMaster.set(master, key);
  }
  return byMaster;
}

/** The pids of the redis-server processes this test process started, sorted. */
function childServers(): number[] {
  try {
    return execFileSync('pgrep', ['-P', String(process.pid), 'redis-server'], { encoding: 'utf8' })
      .split('\n')
      .filter((line) => line.length > 0)
      .map(Number)
      .sort();
  } catch {
    return []; // pgrep exits 1 when none matches
  }
}

beforeAll(async () => {
  const started = Date.now();
  cluster = await startRedisCluster();
  startedInMs = Date.now() - started;
  client = await clusterClient();
}, 30_000);

afterAll(async () => {
  for (const one of opened) one.disconnect();
  await cluster?.stop();
});

describe('startRedisCluster', () => {
  it('starts three masters and three replicas in a few seconds, every slot covered', async () => {
    expect(startedInMs).toBeLessThan(15_000);
    expect(cluster.nodes).toHaveLength(6);
    expect(cluster.nodes.filter((node) => node.role === 'master')).toHaveLength(3);
    expect(cluster.nodes.filter((node) => node.role === 'replica')).toHaveLength(3);
    expect(cluster.nodesSetting).toBe(cluster.nodes.map((node) => `127.0.0.1:${node.port}`).join(','));
    const masters = await cluster.masters();
    expect(masters.sort()).toEqual(
      cluster.nodes
        .filter((node) => node.role === 'master')
        .map((node) => node.port)
        .sort(),
    );
    const ranges = (await direct(masters[0] as number).call('CLUSTER', 'SLOTS')) as [number, number, unknown[]][];
    expect(ranges.reduce((sum, [first, last]) => sum + last - first + 1, 0)).toBe(16384);
    for (const [, , [, port]] of ranges as [number, number, [string, number]][]) expect(masters).toContain(port);
    // Every replica follows a different master.
    const followed = await Promise.all(
      cluster.nodes
        .filter((node) => node.role === 'replica')
        .map(async (node) => Number((await direct(node.port).info('replication')).match(/master_port:(\d+)/)?.[1])),
    );
    expect(followed.sort()).toEqual(masters.sort());
  });

  it('routes keys of different slots to their own master through an ioredis Cluster', async () => {
    const keys = await keyPerMaster('route');
    expect(keys.size).toBe(3);
    for (const [master, key] of keys) {
      expect(await client.set(key, `on ${master}`)).toBe('OK');
      expect(await client.get(key)).toBe(`on ${master}`);
      // The value lives on the master the harness names for the key, and nowhere else among the masters.
      expect(await direct(master).get(key)).toBe(`on ${master}`);
      const elsewhere = [...keys.keys()].find((other) => other !== master) as number;
      await expect(direct(elsewhere).get(key)).rejects.toThrow(/MOVED/);
    }
  });

  it('delivers sharded pub/sub (SSUBSCRIBE/SPUBLISH) through a Cluster with shardedSubscribers', async () => {
    const subscriber = await clusterClient({ shardedSubscribers: true });
    const channels = [...(await keyPerMaster('channel')).values()];
    const received: [string, string][] = [];
    subscriber.on('smessage', (channel: string, message: string) => received.push([channel, message]));
    for (const channel of channels) await subscriber.ssubscribe(channel);
    for (const channel of channels) expect(await client.spublish(channel, `to ${channel}`)).toBe(1);
    await waitFor(() => received.length === channels.length, 'three sharded messages', 5_000);
    expect(received.sort()).toEqual(channels.map((channel) => [channel, `to ${channel}`]).sort());
  });

  it('fails past its start-up bound with a clear error and leaves no server running', async () => {
    const before = childServers();
    expect(before).toEqual(cluster.nodes.map((node) => node.pid).sort());
    await expect(startRedisCluster({ timeoutMs: 300 })).rejects.toThrow(
      /did not finish in time|did not settle .* in 300 ms/,
    );
    expect(childServers()).toEqual(before);
  });

  it('promotes a replica when a master is killed; a write acknowledged by a replica survives', async () => {
    const [[master, key]] = [...(await keyPerMaster('failover')).entries()] as [[number, string]];
    // SET and WAIT on the same connection: the master answers once one replica has the write.
    const replies = await client.pipeline().set(key, 'kept').call('WAIT', '1', '2000').exec();
    expect(replies).toEqual([
      [null, 'OK'],
      [null, 1],
    ]);
    const replicaOfMaster = Number((await direct(master).info('replication')).match(/slave0:.*port=(\d+)/)?.[1]);
    await cluster.killMaster(master);
    expect(() => process.kill(cluster.nodes.find((node) => node.port === master)?.pid as number, 0)).toThrow();
    const promoted = await cluster.waitForFailover(master, 15_000);
    expect(promoted).toBe(replicaOfMaster);
    expect(await cluster.masterOfKey(key)).toBe(promoted);
    expect((await cluster.masters()).sort()).not.toContain(master);
    expect(await cluster.masters()).toHaveLength(3);
    expect(await direct(promoted).get(key)).toBe('kept');
    // The client opened before the failover finds the new master by itself (bounded).
    let value: string | null = null;
    await waitFor(
      async () => {
        value = await client.get(key).catch(() => null);
        return value !== null;
      },
      'the cluster client to read from the promoted replica',
      10_000,
    );
    expect(value).toBe('kept');
  });
});
