import { describe, expect, it } from 'vitest';
import { Keys, MAX_QUEUE_SHARDS, queueOfTask, queuesOfTask, shardOf, shardQueues } from '../src/index.js';
import { CLUSTER_SLOTS, tagSlot, validShardCount } from '../src/queues/queue-shards.js';
import { keySlot } from './key-slot.js';

describe('queue shards', () => {
  it('N = 1 keeps the queue name, so existing deployments keep their keys', () => {
    expect(shardQueues('tool.search', 1)).toEqual(['tool.search']);
    expect(queueOfTask('tool.search', 1, 'AbCdanything')).toBe('tool.search');
    expect(new Keys('tg').bullPrefix(shardQueues('tool.search', 1)[0] as string)).toBe('tg:bull:{tool.search}');
  });

  for (let n = 1; n <= 16; n++) {
    it(`N = ${n}: shard k's slot lies in the k-th of ${n} equal slices of the 16 384 slots`, () => {
      for (const queue of ['tool.search', 'tool.run_agent', 'bridge.resize', 'q']) {
        const names = shardQueues(queue, n);
        expect(names).toHaveLength(n);
        expect(new Set(names).size).toBe(n);
        names.forEach((name, k) => {
          // The slot as Redis Cluster computes it for a real key of the shard (its meta hash).
          const slot = keySlot(new Keys('tg').queueSlotKey(name));
          expect(slot).toBe(tagSlot(name));
          expect(slot).toBeGreaterThanOrEqual(Math.ceil((k * CLUSTER_SLOTS) / n));
          expect(slot).toBeLessThan(Math.ceil(((k + 1) * CLUSTER_SLOTS) / n));
          if (n > 1) expect(name.startsWith(`${queue}#${k}`)).toBe(true);
          expect(name).not.toMatch(/[:{}]/);
        });
      }
    });
  }

  it('the names are a pure function of queue and N (every process finds the same)', () => {
    expect(shardQueues('tool.search', 3)).toEqual(['tool.search#0.1', 'tool.search#1.3', 'tool.search#2.4']);
  });

  it('a task id always maps to the same shard, and random ids fill the shards evenly', () => {
    const counts = [0, 0, 0];
    for (let i = 0; i < 3000; i++) {
      const id = `AbCd${Math.random().toString(36).slice(2)}${i}`;
      const shard = shardOf(id, 3);
      expect(shardOf(id, 3)).toBe(shard);
      expect(queueOfTask('tool.search', 3, id)).toBe(shardQueues('tool.search', 3)[shard]);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });

  it('refuses shard counts that are not whole numbers from 1 to the maximum', () => {
    for (const bad of [0, -1, 1.5, Number.NaN, MAX_QUEUE_SHARDS + 1]) {
      expect(() => validShardCount(bad)).toThrow(/queueShards must be a whole number from 1 to 64/);
    }
    expect(validShardCount(MAX_QUEUE_SHARDS)).toBe(MAX_QUEUE_SHARDS);
  });

  it("a task's queues under every shard count its tool has had: distinct, invalid counts skipped", () => {
    const id = 'Zq3taskIdForShardCounts';
    expect(queuesOfTask('tool.search', [1], id)).toEqual(['tool.search']);
    const under = [queueOfTask('tool.search', 5, id), queueOfTask('tool.search', 3, id)];
    expect(queuesOfTask('tool.search', [5, 3, 5, 0, 65, 2.5], id)).toEqual([...new Set(under)]);
  });
});
