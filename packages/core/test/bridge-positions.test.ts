import { useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { BridgePositions, Keys } from '../src/index.js';
import { sleep } from './support.js';

describe('bridge positions in existing queues event streams', () => {
  const redis = useRedis();
  const stream = { connection: 'legacy', queue: 'bull:reports' };
  const positions = () => new BridgePositions({ redis: redis.connect(), keys: new Keys(redis.prefix) });

  it('gives the lease to one replica at a time; the other takes over once it lapses or is released', async () => {
    const store = positions();
    expect(await store.hold(stream, 'a', 200)).toBe('');
    expect(await store.hold(stream, 'b', 200)).toBeUndefined();
    expect(await store.hold(stream, 'a', 200)).toBe('');
    await sleep(300);
    expect(await store.hold(stream, 'b', 200)).toBe('');
    expect(await store.hold(stream, 'a', 200)).toBeUndefined();
    await store.release(stream, 'b');
    expect(await store.hold(stream, 'a', 10_000)).toBe('');
  });

  it('moves the position forward only, only for the holder, and hands it to the next holder', async () => {
    const store = positions();
    await store.hold(stream, 'a', 10_000);
    expect(await store.advance(stream, 'a', 10_000, '1700000000000-0')).toBe('advanced');
    expect(await store.advance(stream, 'a', 10_000, '1700000000000-1')).toBe('advanced');
    expect(await store.advance(stream, 'a', 10_000, '1700000000000-1')).toBe('applied-before');
    expect(await store.advance(stream, 'a', 10_000, '999999999999-5')).toBe('applied-before');
    expect(await store.advance(stream, 'b', 10_000, '1700000000001-0')).toBe('not-held');
    await store.release(stream, 'a');
    expect(await store.advance(stream, 'a', 10_000, '1700000000001-0')).toBe('not-held');
    expect(await store.hold(stream, 'b', 10_000)).toBe('1700000000000-1');
    // Sequence numbers compare as numbers, not text.
    expect(await store.advance(stream, 'b', 10_000, '1700000000000-10')).toBe('advanced');
    expect(await store.hold(stream, 'b', 10_000)).toBe('1700000000000-10');
  });

  it('keeps one position per connection and queue, under a key of its own that names neither raw', async () => {
    const store = positions();
    await store.hold(stream, 'a', 10_000);
    await store.advance(stream, 'a', 10_000, '5-0');
    expect(await store.hold({ connection: 'legacy', queue: 'bull:exports' }, 'a', 10_000)).toBe('');
    expect(await store.hold({ connection: 'other', queue: 'bull:reports' }, 'a', 10_000)).toBe('');
    expect(new Keys('tg').bridgePosition('legacy', 'bull:{reports}')).toBe('tg:bridge:legacy:bull%3A%7Breports%7D');
  });
});
