import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { type RedisServer, startRedisServer } from '@taskgate/core';
import { tools as exampleTools } from '@taskgate/examples';
import { createGateway } from '@taskgate/gateway';
import { createWorker } from '@taskgate/worker';
import { loadConfig } from '../config.js';
import { loadTools } from '../load-tools.js';
import { createLogger } from '../logger.js';
import { gatewayOptions } from './gateway.js';

/** A cursor secret kept under `.data/` so cursors survive restarts of `dev`. */
function devCursorSecret(dataDir: string): string {
  const file = join(dataDir, 'cursor-secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, `${secret}\n`, { mode: 0o600 });
  return secret;
}

/**
 * `taskgate dev`: everything on one machine, for trying taskgate and developing tools. Uses REDIS_URL or
 * starts a private redis-server with its data under `.data/`, then runs a gateway on 127.0.0.1:3000 and a
 * worker with the example tools (plus any `--tools` modules) in this process.
 */
export async function runDev(argv: readonly string[]): Promise<number> {
  const dataDir = resolve('.data');
  mkdirSync(dataDir, { recursive: true });
  const env = { ...process.env };
  env.TASKGATE_CURSOR_SECRET ??= devCursorSecret(dataDir);
  let redis: RedisServer | undefined;
  if (env.REDIS_URL === undefined) {
    redis = await startRedisServer({ dir: join(dataDir, 'redis') });
    env.REDIS_URL = redis.url;
  }
  try {
    const { config, positionals } = loadConfig('dev', argv, env);
    const logger = createLogger(config.LOG_LEVEL, 'taskgate-dev');
    const extra = [...(config.TASKGATE_TOOLS ?? []), ...positionals];
    const tools = [...exampleTools, ...(extra.length > 0 ? await loadTools(extra) : [])];
    const worker = createWorker({ redis: config.REDIS_URL, prefix: config.TASKGATE_KEY_PREFIX, tools, logger });
    const gateway = createGateway({ ...gatewayOptions(config), logger });
    await worker.ready;
    const address = await gateway.listen(config.PORT, config.HOST);
    process.stdout.write(banner(address.url, config.REDIS_URL, redis !== undefined, worker.tools));
    await new Promise<void>((done) => {
      process.once('SIGINT', () => done());
      process.once('SIGTERM', () => done());
    });
    process.stdout.write('\nstopping...\n');
    await gateway.close();
    await worker.close({ deadlineMs: config.TASKGATE_DRAIN_TIMEOUT_MS });
    return 0;
  } finally {
    await redis?.stop();
  }
}

function banner(url: string, redisUrl: string, ownRedis: boolean, tools: readonly string[]): string {
  return [
    '',
    'taskgate dev is running',
    '',
    `  MCP endpoint   ${url}`,
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
