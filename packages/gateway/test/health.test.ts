import { createHash } from 'node:crypto';
import { loadScriptSource, SCRIPT_KEY_COUNTS, type ScriptName } from '@taskgate/core';
import { scrape, startRedis, useRedis, waitFor } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { createGateway } from '../src/index.js';
import { CURSOR_SECRET, useStacks } from './support/stack.js';

const shas = (Object.keys(SCRIPT_KEY_COUNTS) as ScriptName[]).map((name) =>
  createHash('sha1').update(loadScriptSource(name)).digest('hex'),
);

describe('health endpoints', () => {
  const redis = useRedis();
  const start = useStacks(redis);

  it('/readyz is ready with Redis reachable and every script loaded, and reloads scripts Redis lost', async () => {
    const { url, redis: connection } = await start({ tools: false });
    const origin = new URL(url).origin;
    expect(await (await fetch(`${origin}/healthz`)).json()).toEqual({ status: 'ok' });
    const ready = await fetch(`${origin}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready' });
    await connection.script('FLUSH');
    expect(await connection.script('EXISTS', ...shas)).toEqual(shas.map(() => 0));
    expect((await fetch(`${origin}/readyz`)).status).toBe(200);
    expect(await connection.script('EXISTS', ...shas)).toEqual(shas.map(() => 1));
  });

  it('/readyz answers 503 when Redis is gone while /healthz stays 200; Redis health shows in metrics', async () => {
    const server = await startRedis();
    const connection = new Redis(server.url, { maxRetriesPerRequest: 1 });
    const gateway = createGateway({ redis: connection, keyPrefix: redis.prefix, cursorSecret: CURSOR_SECRET });
    try {
      const origin = new URL((await gateway.listen(0)).url).origin;
      expect((await fetch(`${origin}/readyz`)).status).toBe(200);
      await server.stop();
      const down = await fetch(`${origin}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toEqual({ status: 'unavailable' });
      expect((await fetch(`${origin}/healthz`)).status).toBe(200);
      await waitFor(
        async () => (await scrape(`${origin}/metrics`)).value('taskgate_redis_reconnects_total') > 0,
        'a reconnect attempt',
      );
      const metrics = await scrape(`${origin}/metrics`);
      expect(metrics.value('taskgate_redis_connected', { connection: 'commands' })).toBe(0);
      expect(metrics.value('taskgate_redis_errors_total', { connection: 'commands' })).toBeGreaterThan(0);
    } finally {
      await gateway.close();
      connection.disconnect();
    }
  });
});
