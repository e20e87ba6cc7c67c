import { startTcpRelay, useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { Keys, TaskStore } from '../src/index.js';

describe('a create whose reply is lost with the connection', () => {
  const redis = useRedis();
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('returns the task its first run created, counted once, when the script is sent again', async () => {
    // ioredis sends a command again on its next connection when its reply was lost (`autoResendUnfulfilledCommands`).
    const cutter = await startTcpRelay(redis.server.port);
    cleanups.push(() => cutter.close());
    const connection = redis.connect({ port: cutter.port, maxRetriesPerRequest: 3 });
    const keys = new Keys(redis.prefix);
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'x'.repeat(32) });
    // The first create loads the script, so the one whose reply is lost is a plain EVALSHA.
    const first = await store.create({ owner: 'alice', tool: 'sleep' });
    cutter.cutNextReply();
    const second = await store.create({ owner: 'alice', tool: 'sleep' });

    expect(second.taskId).not.toBe(first.taskId);
    expect(second.status).toBe('working');
    expect(second.ownerId).toBe(Keys.ownerId('alice'));
    expect((await store.get('alice', second.taskId)).status).toBe('working');
    const admin = redis.connect();
    const ownerId = Keys.ownerId('alice');
    expect(await admin.zcard(keys.ownerTasks(ownerId))).toBe(2);
    expect(await admin.zcard(keys.ownerActive(ownerId))).toBe(2);
  });
});
