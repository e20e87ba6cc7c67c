import { fileURLToPath } from 'node:url';
import { forkNode, type RedisServer, startRedis, waitFor } from '@taskgate/test-harness';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const cli = fileURLToPath(new URL('../src/run.ts', import.meta.url));

describe('taskgate processes check their Redis at start-up (redis-server with allkeys-lru)', () => {
  let server: RedisServer;
  beforeAll(async () => {
    server = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
  });
  afterAll(async () => {
    await server.stop();
  });

  it('a worker logs the eviction error and keeps running', async () => {
    await using worker = forkNode(cli, ['worker', '--tools', '@taskgate/examples'], {
      REDIS_URL: server.url,
      LOG_LEVEL: 'info',
      TASKGATE_METRICS_PORT: '0',
    });
    const message = 'Redis maxmemory-policy is allkeys-lru: use noeviction, or Redis may evict tasks and queues';
    await waitFor(() => worker.output().includes(message), 'the eviction error in the log', 20_000);
    expect(worker.output()).toMatch(/"level":50[^\n]*Redis maxmemory-policy is allkeys-lru/);
    expect(worker.output()).toMatch(/"maxmemoryPolicy":"allkeys-lru"[^\n]*"msg":"redis server"/);
    expect(worker.child.exitCode).toBeNull();
  });

  it('with TASKGATE_REDIS_STRICT=true the gateway and the worker exit non-zero with the message', async () => {
    const base = { REDIS_URL: server.url, LOG_LEVEL: 'silent', TASKGATE_REDIS_STRICT: 'true' };
    const gateway = forkNode(cli, ['gateway'], {
      ...base,
      PORT: '0',
      TASKGATE_CURSOR_SECRET: 'strict-secret-0123456789',
    });
    const worker = forkNode(cli, ['worker', '--tools', '@taskgate/examples'], { ...base, TASKGATE_METRICS_PORT: '0' });
    for (const child of [gateway, worker]) {
      expect(await child.exited).toBe(2);
      expect(child.output()).toContain('Redis maxmemory-policy is allkeys-lru: use noeviction');
    }
  });
});
