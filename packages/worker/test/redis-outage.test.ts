import { freePort, startRedis, useRedis } from '@taskgate/test-harness';
import { describe, expect, it } from 'vitest';
import { createWorker, defineTool, type TaskgateWorker } from '../src/index.js';
import { simple } from './support/simple-tool.js';

/** How long `close()` took, or `'pending'` if it had not resolved after `limitMs`. */
async function timeClose(worker: TaskgateWorker, limitMs: number): Promise<number | 'pending'> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const pending = new Promise<'pending'>((resolve) => {
    timer = setTimeout(() => resolve('pending'), limitMs);
  });
  const closed = worker.close({ deadlineMs: 100 }).then(() => Date.now() - started);
  try {
    return await Promise.race([closed, pending]);
  } finally {
    clearTimeout(timer);
  }
}

// A shutdown must finish whatever state Redis is in: BullMQ's Worker.close() waits for its blocking connection to
// end, and an ioredis connection waiting to reconnect (no socket, a retry timer) used to never emit 'end'.
describe('closing a worker while Redis is down', () => {
  const redis = useRedis();
  const tool = defineTool({ ...simple, name: 'stranded', handler: () => 'never runs' });

  it('closes while its connections wait to reconnect to a Redis that went away', async () => {
    const server = await startRedis();
    const worker = createWorker({ redis: server.url, prefix: redis.prefix, tools: [tool] });
    try {
      await worker.ready;
    } finally {
      await server.stop();
    }
    // Long enough for every connection to see the socket close and wait for its next reconnect attempt.
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const took = await timeClose(worker, 10_000);
    expect(took).not.toBe('pending');
    expect(took).toBeLessThan(5000);
  });

  it('closes when Redis never answered', async () => {
    const url = `redis://127.0.0.1:${await freePort()}`;
    const worker = createWorker({ redis: url, prefix: redis.prefix, tools: [tool] });
    worker.ready.catch(() => {});
    await new Promise((resolve) => setTimeout(resolve, 500));
    const took = await timeClose(worker, 10_000);
    expect(took).not.toBe('pending');
    expect(took).toBeLessThan(5000);
  });
});
