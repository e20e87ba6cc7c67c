import { createServer, type Server, type Socket, connect as tcpConnect } from 'node:net';
import { useRedis } from '@taskgate/test-harness';
import { afterEach, describe, expect, it } from 'vitest';
import { Keys, TaskStore } from '../src/index.js';

/**
 * A TCP relay in front of the test's Redis that, once armed, swallows the next reply Redis sends and cuts the
 * client's connection: the command ran, its client never learns it, and ioredis sends it again on its next
 * connection (`autoResendUnfulfilledCommands`).
 */
async function startReplyCutter(target: number): Promise<{ port: number; arm(): void; close(): Promise<void> }> {
  let armed = false;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    const upstream = tcpConnect(target, '127.0.0.1');
    sockets.add(client).add(upstream);
    client.on('data', (chunk) => upstream.write(chunk));
    upstream.on('data', (chunk) => {
      if (!armed) return void client.write(chunk);
      armed = false;
      client.destroy();
      upstream.destroy();
    });
    for (const socket of [client, upstream]) {
      socket.on('error', () => {});
      socket.on('close', () => {
        client.destroy();
        upstream.destroy();
      });
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return {
    port: address.port,
    arm: () => {
      armed = true;
    },
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

describe('a create whose reply is lost with the connection', () => {
  const redis = useRedis();
  const cleanups: Array<() => Promise<void>> = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('returns the task its first run created, counted once, when the script is sent again', async () => {
    const cutter = await startReplyCutter(redis.server.port);
    cleanups.push(() => cutter.close());
    const connection = redis.connect({ port: cutter.port, maxRetriesPerRequest: 3 });
    const keys = new Keys(redis.prefix);
    const store = new TaskStore({ redis: connection, keys, cursorSecret: 'x'.repeat(32) });
    // The first create loads the script, so the one whose reply is lost is a plain EVALSHA.
    const first = await store.create({ owner: 'alice', tool: 'sleep' });
    cutter.arm();
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
