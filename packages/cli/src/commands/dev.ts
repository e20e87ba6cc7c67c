import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createMetricsRegistry } from '@taskgate/core';
import { type RedisServer, startRedisServer } from '@taskgate/dev-redis';
import { tools as exampleTools } from '@taskgate/examples';
import { createGateway } from '@taskgate/gateway';
import { createWorker } from '@taskgate/worker';
import { DEV_DEFAULTS, loadCommandConfig } from '../command-help.js';
import { loadOfferings } from '../load-tools.js';
import { createLogger } from '../logger.js';
import { checkRedisAtStart, redisConnectionOptions } from '../redis.js';
import { startTelemetry } from '../telemetry.js';
import { gatewayOptions } from './gateway.js';
import { workerOptions } from './worker.js';

/** A cursor secret kept under `.data/` so cursors survive restarts of `dev`. */
function devCursorSecret(dataDir: string): string {
  const file = join(dataDir, 'cursor-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/** Whether the command line gives a flag (as `--flag value` or `--flag=value`). */
const hasFlag = (argv: readonly string[], flag: string): boolean =>
  argv.some((arg) => arg === flag || arg.startsWith(`${flag}=`));

/**
 * `taskgate dev`: everything on one machine, for trying taskgate and developing tools. Uses REDIS_URL or
 * starts a private redis-server with its data under `.data/`, then runs a gateway on 127.0.0.1:3000 and a
 * worker with the example tools (plus any `--tools` modules) in this process, and the admin listener when
 * TASKGATE_ADMIN_PORT is set. `.data/` is made only for what needs it: with a Redis and a cursor secret given,
 * nothing is written (a read-only root works). Ctrl-C drains for about 2 s (DEV_DEFAULTS) then aborts what
 * still runs; a second Ctrl-C stops at once.
 */
export async function runDev(argv: readonly string[]): Promise<number> {
  const env: Record<string, string | undefined> = { ...process.env };
  for (const [name, value] of Object.entries(DEV_DEFAULTS)) env[name] ??= value;
  // The arguments parse before anything exists: a typo leaves no .data/ and no redis-server behind.
  const given = loadCommandConfig('dev', argv, env).config;
  const ownRedis =
    env.REDIS_URL === undefined &&
    !hasFlag(argv, '--redis-url') &&
    given.TASKGATE_REDIS_SENTINELS === undefined &&
    given.TASKGATE_REDIS_CLUSTER_NODES === undefined;
  const ownSecret = env.TASKGATE_CURSOR_SECRET === undefined && !hasFlag(argv, '--cursor-secret');
  const dataDir = resolve('.data');
  if (ownRedis || ownSecret) mkdirSync(dataDir, { recursive: true });
  if (ownSecret) env.TASKGATE_CURSOR_SECRET = devCursorSecret(dataDir);
  let redis: RedisServer | undefined;
  if (ownRedis) {
    redis = await startRedisServer({ dir: join(dataDir, 'redis') });
    env.REDIS_URL = redis.url;
  }
  try {
    const { config, positionals } = loadCommandConfig('dev', argv, env);
    const logger = createLogger(config.LOG_LEVEL, 'taskgate-dev');
    const telemetry = await startTelemetry('taskgate-dev', { redisSpans: config.TASKGATE_TRACE_REDIS, logger }, env);
    const extra = [...(config.TASKGATE_TOOLS ?? []), ...positionals];
    const loaded = await loadOfferings(extra);
    const tools = [...exampleTools, ...loaded.tools];
    // One process, one registry: the gateway's /metrics shows the worker's metrics too.
    const metrics = createMetricsRegistry({ defaultMetrics: true });
    await checkRedisAtStart(redisConnectionOptions(config), config, logger, metrics);
    const worker = createWorker({ ...workerOptions(config, metrics), metricsPort: 0, ...loaded, tools, logger });
    const gateway = createGateway({ ...gatewayOptions(config, metrics), logger });
    await worker.ready;
    const address = await gateway.listen(config.PORT, config.HOST);
    const admin =
      config.TASKGATE_ADMIN_PORT === undefined
        ? undefined
        : await gateway.listenAdmin(config.TASKGATE_ADMIN_PORT, config.TASKGATE_ADMIN_HOST);
    process.stdout.write(banner(address.url, config.REDIS_URL, redis !== undefined, worker.tools, admin?.url));
    await new Promise<void>((done) => {
      process.once('SIGINT', () => done());
      process.once('SIGTERM', () => done());
    });
    process.stdout.write('\nstopping (Ctrl-C again to stop at once)...\n');
    process.once('SIGINT', () => stopAtOnce(redis));
    await gateway.close();
    await worker.close({ deadlineMs: Math.max(1, config.TASKGATE_DRAIN_TIMEOUT_MS) });
    await telemetry?.shutdown();
    return 0;
  } finally {
    await redis?.stop();
  }
}

/** A second Ctrl-C: the private redis-server gets SIGTERM (it saves and exits) and this process ends now. */
function stopAtOnce(redis: RedisServer | undefined): never {
  process.stdout.write('stopped at once\n');
  if (redis !== undefined) {
    try {
      process.kill(redis.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  }
  process.exit(130);
}

function banner(
  url: string,
  redisUrl: string,
  ownRedis: boolean,
  tools: readonly string[],
  adminUrl: string | undefined,
): string {
  return [
    '',
    'taskgate dev is running',
    '',
    `  MCP endpoint   ${url}`,
    ...(adminUrl === undefined ? [] : [`  admin          ${adminUrl} (the console and the admin API; bearer token)`]),
    `  Redis          ${redisUrl}${ownRedis ? ' (private, data in .data/redis)' : ''}`,
    `  tools          ${tools.join(', ')}`,
    '',
    'Try it from another terminal:',
    '',
    `  npx taskgate call --url ${url} report '{"pages":5,"msPerPage":300}' --task`,
    `  npx taskgate call --url ${url} ask_name --task`,
    `  npx taskgate call --url ${url} echo '{"text":"hello"}'`,
    '',
    'or point any MCP client (Streamable HTTP) at the endpoint. Ctrl-C stops everything.',
    '',
  ].join('\n');
}
