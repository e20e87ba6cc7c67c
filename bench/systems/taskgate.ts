import { randomBytes } from 'node:crypto';
import { Keys } from '@taskgate/core';
import { freePort, type RedisServer, startRedisServer } from '@taskgate/dev-redis';
import { startRoundRobinProxy } from '@taskgate/test-harness';
import { Redis } from 'ioredis';
import type { BenchConfig } from '../lib/config.js';
import { LeanSubject } from '../lib/lean-client.js';
import { answers200, type BenchProcess, type ProcessSet, waitForLog, waitUntil } from '../lib/processes.js';
import { profileFlags } from '../lib/profile.js';
import { McpSubject } from './mcp-subject.js';

/** A running taskgate: its private Redis, gateway and worker processes, and the MCP endpoint to drive. */
export interface TaskgateSystem {
  readonly redisServer: RedisServer;
  /** An admin connection (INFO, CLIENT LIST, seeding). */
  readonly redis: Redis;
  readonly keys: Keys;
  readonly cursorSecret: string;
  readonly gateways: readonly BenchProcess[];
  /** Each gateway's own MCP endpoint. */
  readonly gatewayUrls: readonly string[];
  readonly workers: readonly BenchProcess[];
  /** Where clients go: the one gateway, or the round-robin proxy in front of several. */
  readonly url: string;
  /** Driven by the official SDK client. */
  readonly subject: McpSubject;
  /** Driven by the lean load generator. */
  readonly lean: LeanSubject;
}

/** taskgate's gateway and worker processes on some Redis, and where clients reach them. */
export interface TaskgateProcesses {
  readonly cursorSecret: string;
  readonly gateways: readonly BenchProcess[];
  readonly gatewayUrls: readonly string[];
  readonly workers: readonly BenchProcess[];
  readonly url: string;
  readonly subject: McpSubject;
  readonly lean: LeanSubject;
}

/**
 * Starts the gateways and workers (bench/fixtures/*-main.ts, the library entry points `createGateway` /
 * `createWorker` as `taskgate gateway|worker` call them) with `redisEnv` telling them where Redis is
 * (REDIS_URL, or TASKGATE_REDIS_CLUSTER_NODES), and resolves once every one is ready. `redisPids` are the
 * redis-servers, counted in the subject's CPU time.
 */
export async function startTaskgateProcesses(
  config: BenchConfig,
  processes: ProcessSet,
  root: string,
  redisEnv: Record<string, string>,
  redisPids: readonly number[],
  name = 'taskgate',
): Promise<TaskgateProcesses> {
  const cursorSecret = randomBytes(24).toString('base64url');
  const env = {
    ...redisEnv,
    TASKGATE_KEY_PREFIX: 'tg',
    TASKGATE_CURSOR_SECRET: cursorSecret,
    LOG_LEVEL: 'info',
    BENCH_CONCURRENCY: String(config.concurrency),
  };
  const ports = await Promise.all(Array.from({ length: config.gateways }, () => freePort()));
  const gateways = ports.map((port, i) =>
    processes.spawnNode(
      `${name}-gateway-${i}`,
      `${root}bench/fixtures/gateway-main.ts`,
      [],
      { ...env, PORT: String(port) },
      profileFlags(config.profileDir, `${name}-gateway-${i}`),
    ),
  );
  const workers = Array.from({ length: config.workers }, (_, i) =>
    processes.spawnNode(
      `${name}-worker-${i}`,
      `${root}bench/fixtures/worker-main.ts`,
      [],
      env,
      profileFlags(config.profileDir, `${name}-worker-${i}`),
    ),
  );
  await Promise.all([
    ...gateways.map((proc, i) =>
      waitUntil(`${proc.name} /readyz`, () => answers200(`http://127.0.0.1:${ports[i]}/readyz`), {
        proc,
        timeoutMs: 60_000,
      }),
    ),
    ...workers.map((proc) => waitForLog(proc, /"msg":"worker ready"/)),
  ]);
  const gatewayUrls = ports.map((port) => `http://127.0.0.1:${port}/mcp`);
  let url = gatewayUrls[0] as string;
  if (gateways.length > 1) {
    const proxy = await startRoundRobinProxy(ports.map((port) => `http://127.0.0.1:${port}`));
    processes.add(`${name} round-robin proxy`, () => proxy.close());
    url = `${proxy.origin}/mcp`;
  }
  const pids = [...gateways, ...workers].map((proc) => proc.pid);
  const roles = {
    gateway: gateways.map((proc) => proc.pid),
    worker: workers.map((proc) => proc.pid),
    redis: redisPids,
  };
  const subject = new McpSubject(name, url, [...pids, ...redisPids], roles);
  processes.add(`${name} clients`, () => subject.close());
  const lean = new LeanSubject(name, url, [...pids, ...redisPids], 'block', undefined, roles);
  processes.add(`${name} lean client`, () => lean.destroy());
  return { cursorSecret, gateways, gatewayUrls, workers, url, subject, lean };
}

/**
 * Starts taskgate as separate processes, from sources, on a private redis-server: gateways and workers
 * configured by environment variables and left at their defaults (log level info, pollInterval 1 s, 100 active
 * tasks per owner), with the bench's `noop` tool. `root` is the tree whose sources run (this checkout, or an
 * earlier commit's: bench/systems/taskgate-before.ts); `name` names the subject in the results.
 */
export async function startTaskgate(
  config: BenchConfig,
  processes: ProcessSet,
  root: string,
  name = 'taskgate',
): Promise<TaskgateSystem> {
  const redisServer = await startRedisServer();
  processes.add(`${name} redis-server`, () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  processes.add(`${name} admin connection`, async () => void (await redis.quit().catch(() => redis.disconnect())));
  // An empty cluster setting: one server, whatever the bench's own environment says.
  const redisEnv = { REDIS_URL: redisServer.url, TASKGATE_REDIS_CLUSTER_NODES: '' };
  const started = await startTaskgateProcesses(config, processes, root, redisEnv, [redisServer.pid], name);
  return { redisServer, redis, keys: new Keys('tg'), ...started };
}
