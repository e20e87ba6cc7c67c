import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { Keys } from '../src/index.js';
import { scriptRunner } from '../src/redis/scripts.js';
import { isTaskIdShape, newTaskId } from '../src/tasks/ids.js';
import { makeStore } from './support.js';

const COUNT = 1_000_000;
const BITS = 144;

describe('task ids', () => {
  it('[CRT-6][SEC-2] a million ids: no collision, 144 random bits each, balanced bits, no counter structure', () => {
    const seen = new Set<string>();
    // Histogram of byte values per byte position; bit counts are derived from it afterwards (fast).
    const histogram = new Uint32Array(18 * 256);
    let sharedPrefix = 0;
    let longestShared = 0;
    let previous = '';
    for (let n = 0; n < COUNT; n++) {
      const tagged = newTaskId('tag0');
      seen.add(tagged);
      // The owner's slot tag, then the random part.
      const id = tagged.slice(4);
      const bytes = Buffer.from(id, 'base64url');
      if (n < 1000) {
        // Shape: the tag, then 24 base64url characters that decode to 18 bytes (144 bits ≥ 128).
        expect(tagged).toMatch(/^tag0[A-Za-z0-9_-]{24}$/);
        expect(bytes.length).toBe(18);
        expect(bytes.toString('base64url')).toBe(id);
        expect(isTaskIdShape(tagged)).toBe(true);
      }
      for (let i = 0; i < 18; i++) histogram[i * 256 + bytes[i]!]! += 1;
      let common = 0;
      while (common < id.length && id[common] === previous[common]) common++;
      sharedPrefix += common;
      if (common > longestShared) longestShared = common;
      previous = id;
    }
    const onesAt = new Array<number>(BITS).fill(0);
    for (let i = 0; i < 18; i++) {
      for (let value = 0; value < 256; value++) {
        const count = histogram[i * 256 + value]!;
        for (let b = 0; b < 8; b++) if ((value >> b) & 1) onesAt[i * 8 + b]! += count;
      }
    }
    const ones = onesAt.reduce((a, b) => a + b, 0);
    expect(seen.size).toBe(COUNT);
    // All bits: mean 0.5, sd = sqrt(144e6 / 4) = 6,000 ones (0.00004); allow ~7 sd.
    expect(Math.abs(ones / (COUNT * BITS) - 0.5)).toBeLessThan(0.0003);
    // Every bit position on its own: sd = 500 ones per position; a stuck or counter-like bit is far off.
    for (let bit = 0; bit < BITS; bit++) expect(Math.abs(onesAt[bit]! - COUNT / 2), `bit ${bit}`).toBeLessThan(3_500);
    // Consecutive ids share a first character with p = 1/64: mean common prefix ≈ 1/63 characters.
    expect(sharedPrefix / COUNT).toBeLessThan(0.018);
    expect(sharedPrefix / COUNT).toBeGreaterThan(0.014);
    expect(longestShared).toBeLessThan(6);
  }, 60_000);

  it('isTaskIdShape rejects what could not be an id before Redis is asked', () => {
    for (const bad of [
      '',
      'short',
      'a'.repeat(15),
      'a'.repeat(65),
      'has space xxxxxxxxxxxxxx',
      'x:y:zzzzzzzzzzzzzzzz',
      'ü'.repeat(24),
    ]) {
      expect(isTaskIdShape(bad), bad).toBe(false);
    }
    expect(isTaskIdShape('a'.repeat(16))).toBe(true);
    expect(isTaskIdShape('A-_0'.repeat(16))).toBe(true);
  });
});

describe('task id uniqueness in Redis', () => {
  const redis = useRedis();

  it('[CRT-6] the create script refuses an id that already exists and leaves the existing task untouched', async () => {
    const store = makeStore(redis);
    const conn = redis.connect();
    const task = await store.create({ owner: 'alice', tool: 'one' });
    const before = await conn.hgetall(store.keys.task(task.taskId));
    const ownerId = Keys.ownerId('mallory');
    const run = scriptRunner(conn);
    const reply = await run(
      'createTask',
      [store.keys.task(task.taskId), store.keys.ownerTasks(ownerId), store.keys.ownerActive(ownerId)],
      [task.taskId, 60_000, '', ownerId, 0, '{"kind":"task"}', '1'],
    );
    expect(reply).toEqual([-5]);
    expect(await conn.hgetall(store.keys.task(task.taskId))).toEqual(before);
    expect(await conn.exists(store.keys.ownerTasks(ownerId), store.keys.ownerActive(ownerId))).toBe(0);
  });

  it('[CRT-6] concurrent creates from several connections all get distinct ids', async () => {
    const stores = [0, 1, 2].map(() => makeStore(redis, { maxActivePerOwner: 0 }));
    const created = await Promise.all(
      Array.from({ length: 600 }, (_v, i) => stores[i % 3]!.create({ owner: `o${i % 7}` })),
    );
    expect(new Set(created.map((t) => t.taskId)).size).toBe(600);
    expect(created.every((t) => t.version === 1 && t.status === 'working')).toBe(true);
  });
});
