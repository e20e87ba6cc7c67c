import { startRedis, uniquePrefix } from '@taskgate/test-harness';
import { afterAll, describe, expect, it } from 'vitest';
import { bridgeConfig, forkBridge, removeConfigs, writeConfig } from './support.js';

// A bridge process whose Redis went away (the redis-server killed) still stops on SIGTERM: its close is
// bounded (the followers' connections are dropped when they do not stop in time) and the process exits
// instead of waiting for a Redis that does not come back.

afterAll(() => removeConfigs());

const DRAIN_MS = 2_000;

describe('taskgate bridge without its Redis', () => {
  it('exits on SIGTERM within its drain deadline after Redis was killed', async () => {
    const redis = await startRedis();
    const bridge = await forkBridge(
      {
        REDIS_URL: redis.url,
        TASKGATE_KEY_PREFIX: uniquePrefix('bridge-gone'),
        TASKGATE_DRAIN_TIMEOUT_MS: String(DRAIN_MS),
      },
      writeConfig(bridgeConfig(redis.url)),
    );
    try {
      await redis.stop();
      const started = Date.now();
      process.kill(bridge.pid, 'SIGTERM');
      // Bounded: the drain deadline, then the close margin; never a wait for Redis (no timer of the test ends it).
      const code = await Promise.race([
        bridge.exited,
        new Promise<'still running'>((resolve) => setTimeout(() => resolve('still running'), 30_000)),
      ]);
      expect(code, bridge.output()).toBe(0);
      expect(Date.now() - started).toBeLessThan(DRAIN_MS + 15_000);
      expect(bridge.output()).toContain('"msg":"shutting down: draining running jobs"');
      expect(bridge.output()).toContain(
        '"msg":"the queue followers did not stop in time (Redis does not answer): dropping their connections"',
      );
    } finally {
      await bridge.stop('SIGKILL');
      await redis.stop();
    }
  }, 60_000);
});
