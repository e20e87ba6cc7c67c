import { Keys, newSessionId } from '@taskgate/core';
import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { parseConfig } from '../../bench/lib/config.js';
import { buildShardRows } from '../../bench/lib/report-shards.js';
import { countKeys, type ShardsResult, spreadPercent } from '../../bench/workloads/shards.js';

const redis = useRedis();

/** A result with one shard per entry of `ownerKeys`, everything else fixed. */
function result(topology: string, ownerKeys: readonly number[], perShard?: readonly number[]): ShardsResult {
  const commands = perShard ?? ownerKeys.map(() => 70);
  return {
    topology,
    owners: 30,
    tasks: 100,
    inFlight: 10,
    throughput: 50,
    p50: 10,
    p99: 20,
    errors: 0,
    commandsPerTask: commands.reduce((sum, c) => sum + c, 0),
    completed: 130,
    shards: ownerKeys.map((owner, i) => ({
      address: `127.0.0.1:${7000 + i}`,
      commandsPerTask: commands[i] ?? 70,
      keys: { all: owner + 6, owner, sessions: 10, bullmq: 4, other: 2 },
      byKey: { owner: 30, bullmq: 40, other: 0, none: 3 },
      breakdown: '',
    })),
  };
}

describe('bench workload f (single node beside a Redis Cluster)', () => {
  it('runs only when asked for: --cluster alone, or added to --only', () => {
    expect([...parseConfig([], '/r/').only]).toEqual(['a', 'b', 'c', 'd', 'e']);
    expect([...parseConfig(['--cluster'], '/r/').only]).toEqual(['f']);
    expect([...parseConfig(['--only', 'a', '--cluster'], '/r/').only]).toEqual(['a', 'f']);
    expect([...parseConfig(['--only', 'f'], '/r/').only]).toEqual(['f']);
    expect(() => parseConfig(['--only', 'g'], '/r/')).toThrow("--only: unknown workload 'g'");
  });

  it('sorts every key of a server into per-owner, session record, BullMQ and other', async () => {
    const client = redis.connect();
    await client.flushdb();
    const keys = new Keys('tg');
    const sessionId = newSessionId();
    const taskId = `${sessionId.slice(0, 4)}${'x'.repeat(20)}`;
    const ownerId = Keys.ownerId(sessionId);
    await client.hset(keys.session(sessionId), 'owner', ownerId);
    await client.xadd(keys.sessionFeed(sessionId), '*', 's', '1');
    await client.hset(keys.task(taskId), 'status', 'working');
    await client.zadd(keys.ownerTasks(ownerId), 1, taskId);
    await client.set(`${keys.bullPrefix(Keys.toolQueueName('noop'))}:${Keys.toolQueueName('noop')}:id`, '7');
    await client.hset(keys.toolCatalog(), 'noop', '{}');
    await client.set(`${keys.rateLimit('create')}:${Keys.digest(sessionId)}`, '1');

    expect(await countKeys(client)).toEqual({ all: 7, owner: 4, sessions: 1, bullmq: 1, other: 2 });
  });

  it('judges the spread of per-owner keys across shards against ±20 % of the mean', () => {
    expect(spreadPercent([90, 100, 110])).toBeCloseTo(10, 10);
    expect(spreadPercent([5])).toBe(0);
    const single = result('single node', [300]);
    const within = buildShardRows(single, result('cluster (3 masters)', [100, 100, 130]));
    const outside = buildShardRows(single, result('cluster (3 masters)', [100, 100, 136]));
    const ownerRow = (rows: typeof within) => rows.find((row) => row.metric.includes('per-owner keys (tg:'));
    expect(ownerRow(within)).toMatchObject({ cluster: 330, perShard: [100, 100, 130], verdict: 'PASS' });
    expect(ownerRow(within)?.target).toBe('spread ≤ ±20 % (18.2 %)');
    expect(ownerRow(outside)).toMatchObject({ verdict: 'MISS', target: 'spread ≤ ±20 % (21.4 %)' });
  });

  it('judges the busiest master of the sharded run against 40 % of the commands, and every task once', () => {
    const single = result('single node', [300]);
    const cluster = result('cluster (3 masters)', [100, 100, 100], [20, 20, 60]);
    const even = { ...result('sharded', [100, 100, 100], [30, 32, 38]), executions: { tasks: 130, repeated: 0 } };
    const hot = { ...result('sharded', [100, 100, 100], [25, 25, 50]), executions: { tasks: 130, repeated: 1 } };
    const busiest = (rows: ReturnType<typeof buildShardRows>) => rows.find((row) => row.metric.includes('busiest'));
    const once = (rows: ReturnType<typeof buildShardRows>) => rows.find((row) => row.metric.includes('executed once'));
    const passing = buildShardRows(single, cluster, even);
    expect(busiest(passing)).toMatchObject({
      single: 60,
      cluster: 38,
      verdict: 'PASS',
      target: '≤ 40 % with shards (38.0 %)',
    });
    expect(once(passing)).toMatchObject({ verdict: 'PASS', target: '130 executed for 130 completed, 0 twice or more' });
    const missing = buildShardRows(single, cluster, hot);
    expect(busiest(missing)).toMatchObject({ cluster: 50, verdict: 'MISS' });
    expect(once(missing)?.verdict).toBe('MISS');
    expect(once(buildShardRows(single, cluster, { ...even, executions: { tasks: 129, repeated: 0 } }))?.verdict).toBe(
      'MISS',
    );
    // Without the third run, no rows of it.
    expect(busiest(buildShardRows(single, cluster))).toBeUndefined();
  });
});
