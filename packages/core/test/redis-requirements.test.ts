import { startRedis } from '@taskgate/test-harness';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import {
  checkRedisRequirements,
  closeRedis,
  createRedisConnection,
  RedisRequirementError,
  requirementsMetrics,
} from '../src/index.js';
import { redisProblems } from '../src/redis/redis-requirements.js';

function recordingLogger() {
  const lines: { level: string; message: string; fields: object }[] = [];
  const at =
    (level: string) =>
    (fields: object, message: string): void => {
      lines.push({ level, message, fields });
    };
  return { lines, logger: { error: at('error'), warn: at('warn'), info: at('info') } };
}

async function gauge(registry: Registry): Promise<number | undefined> {
  const metric = await registry.getSingleMetric('taskgate_redis_eviction_policy_ok')?.get();
  return metric?.values[0]?.value;
}

describe('Redis requirements at start-up (real redis-server)', () => {
  it('an evicting server: the error is logged and the metric is 0; strict refuses', async () => {
    await using server = await startRedis({ args: ['--maxmemory-policy', 'allkeys-lru'] });
    const redis = createRedisConnection(server.url, 'command');
    try {
      const registry = new Registry();
      const { lines, logger } = recordingLogger();
      const facts = await checkRedisRequirements(redis, {
        strict: false,
        logger,
        observer: requirementsMetrics(registry),
      });
      expect(facts).toMatchObject({ maxmemoryPolicy: 'allkeys-lru', appendonly: 'no' });
      expect(Number.parseInt(facts.version, 10)).toBeGreaterThanOrEqual(7);
      expect(lines.filter((line) => line.level === 'error').map((line) => line.message)).toEqual([
        'Redis maxmemory-policy is allkeys-lru: use noeviction, or Redis may evict tasks and queues',
      ]);
      expect(lines.find((line) => line.message === 'redis server')?.fields).toMatchObject({
        maxmemoryPolicy: 'allkeys-lru',
        appendonly: 'no',
      });
      expect(await gauge(registry)).toBe(0);

      const strict = checkRedisRequirements(redis, { strict: true, logger, observer: requirementsMetrics(registry) });
      await expect(strict).rejects.toBeInstanceOf(RedisRequirementError);
      await expect(strict).rejects.toThrow('Redis maxmemory-policy is allkeys-lru');
    } finally {
      await closeRedis(redis);
    }
  });

  it('a noeviction server with AOF passes, strict included, and the metric is 1', async () => {
    await using server = await startRedis({
      args: ['--maxmemory-policy', 'noeviction', '--appendonly', 'yes', '--appendfsync', 'always'],
    });
    const redis = createRedisConnection(server.url, 'command');
    try {
      const registry = new Registry();
      const { lines, logger } = recordingLogger();
      const facts = await checkRedisRequirements(redis, {
        strict: true,
        logger,
        observer: requirementsMetrics(registry),
      });
      expect(facts).toMatchObject({ maxmemoryPolicy: 'noeviction', appendonly: 'yes', appendfsync: 'always' });
      expect(lines.filter((line) => line.level !== 'info')).toEqual([]);
      expect(await gauge(registry)).toBe(1);
    } finally {
      await closeRedis(redis);
    }
  });

  it('a refused CONFIG GET is a warning, even when strict; an old version is always fatal', async () => {
    await using server = await startRedis({ args: ['--rename-command', 'CONFIG', ''] });
    const redis = createRedisConnection(server.url, 'command');
    try {
      const { lines, logger } = recordingLogger();
      const facts = await checkRedisRequirements(redis, { strict: true, logger });
      expect(facts.maxmemoryPolicy).toBeUndefined();
      expect(lines.filter((line) => line.level === 'warn').map((line) => line.message)).toEqual([
        'CONFIG GET refused: maxmemory-policy and persistence not checked',
      ]);
    } finally {
      await closeRedis(redis);
    }
    expect(redisProblems({ version: '6.2.14', maxmemoryPolicy: 'noeviction' }, false)).toEqual([
      { fatal: true, message: 'Redis 6.2.14 is too old: taskgate needs Redis 7.0 or newer' },
    ]);
  });
});
