import type { Redis } from 'ioredis';
import type { Registry } from 'prom-client';
import { gaugeIn } from '../telemetry/metrics-registry.js';

/** What start-up learned about the Redis server. `undefined`: the server refused to tell (managed Redis). */
export interface RedisServerFacts {
  readonly version: string;
  readonly maxmemoryPolicy?: string;
  readonly appendonly?: string;
  readonly appendfsync?: string;
}

/** A start-up problem: `fatal` ones stop the process (an old server, or eviction in strict mode). */
export interface RedisProblem {
  readonly fatal: boolean;
  readonly message: string;
}

const MIN_MAJOR = 7;

async function configValue(redis: Redis, name: string): Promise<string | undefined> {
  try {
    const reply = (await redis.call('CONFIG', 'GET', name)) as string[];
    return reply[1];
  } catch {
    return undefined;
  }
}

/** Reads the version (INFO server) and, where CONFIG GET is allowed, the eviction and persistence settings. */
export async function readRedisFacts(redis: Redis): Promise<RedisServerFacts> {
  const info = (await redis.call('INFO', 'server')) as string;
  const version = /redis_version:([^\r\n]+)/.exec(info)?.[1] ?? 'unknown';
  const [maxmemoryPolicy, appendonly, appendfsync] = await Promise.all(
    ['maxmemory-policy', 'appendonly', 'appendfsync'].map((name) => configValue(redis, name)),
  );
  return {
    version,
    ...(maxmemoryPolicy !== undefined && { maxmemoryPolicy }),
    ...(appendonly !== undefined && { appendonly }),
    ...(appendfsync !== undefined && { appendfsync }),
  };
}

/**
 * The problems of a server for taskgate: a version below 7.0 (always fatal), an eviction policy other than
 * `noeviction` (evicted keys lose tasks silently; fatal when `strict`), settings that could not be read (a
 * warning, never fatal: strict mode refuses only what it read as wrong).
 */
export function redisProblems(facts: RedisServerFacts, strict: boolean): RedisProblem[] {
  const problems: RedisProblem[] = [];
  const major = Number.parseInt(facts.version, 10);
  if (!(major >= MIN_MAJOR)) {
    problems.push({ fatal: true, message: `Redis ${facts.version} is too old: taskgate needs Redis 7.0 or newer` });
  }
  if (facts.maxmemoryPolicy === undefined) {
    problems.push({ fatal: false, message: 'CONFIG GET refused: maxmemory-policy and persistence not checked' });
  } else if (facts.maxmemoryPolicy !== 'noeviction') {
    problems.push({
      fatal: strict,
      message: `Redis maxmemory-policy is ${facts.maxmemoryPolicy}: use noeviction, or Redis may evict tasks and queues`,
    });
  }
  return problems;
}

/** A gauge-like sink for the outcome (the metrics registry of the process). */
export interface RedisRequirementsObserver {
  evictionPolicy(ok: boolean): void;
}

/** Logs what is wrong; the caller refuses to start on a fatal problem. */
export interface RedisRequirementsLogger {
  error(object: object, message: string): void;
  warn(object: object, message: string): void;
  info(object: object, message: string): void;
}

/**
 * Start-up check of a process's Redis: logs the version and persistence, logs every problem, reports the
 * eviction policy to `observer`, and throws `RedisRequirementError` listing the fatal problems.
 */
export async function checkRedisRequirements(
  redis: Redis,
  options: { strict: boolean; logger: RedisRequirementsLogger; observer?: RedisRequirementsObserver },
): Promise<RedisServerFacts> {
  const facts = await readRedisFacts(redis);
  const { logger } = options;
  logger.info(
    {
      redisVersion: facts.version,
      appendonly: facts.appendonly ?? 'unknown',
      appendfsync: facts.appendfsync ?? 'unknown',
      maxmemoryPolicy: facts.maxmemoryPolicy ?? 'unknown',
    },
    'redis server',
  );
  if (facts.appendonly === 'no')
    logger.warn({}, 'redis AOF is off: a Redis restart loses what the last snapshot missed');
  const problems = redisProblems(facts, options.strict);
  options.observer?.evictionPolicy(facts.maxmemoryPolicy === undefined || facts.maxmemoryPolicy === 'noeviction');
  for (const problem of problems) {
    if (problem.message.startsWith('CONFIG GET')) logger.warn({}, problem.message);
    else logger.error({ fatal: problem.fatal }, problem.message);
  }
  const fatal = problems.filter((problem) => problem.fatal);
  if (fatal.length > 0) throw new RedisRequirementError(fatal.map((problem) => problem.message));
  return facts;
}

/** The server does not meet taskgate's requirements; the process must not start. */
export class RedisRequirementError extends Error {
  readonly problems: readonly string[];
  constructor(problems: readonly string[]) {
    super(problems.join('; '));
    this.name = 'RedisRequirementError';
    this.problems = problems;
  }
}

/** Reports the eviction check as `taskgate_redis_eviction_policy_ok` (1: noeviction or unknown, 0: evicting). */
export function requirementsMetrics(registry: Registry): RedisRequirementsObserver {
  const gauge = gaugeIn(registry, {
    name: 'taskgate_redis_eviction_policy_ok',
    help: "1 when Redis's maxmemory-policy is noeviction (or could not be read), 0 when Redis may evict keys.",
  });
  return { evictionPolicy: (ok) => gauge.set(ok ? 1 : 0) };
}
