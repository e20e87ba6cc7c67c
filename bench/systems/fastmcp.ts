import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { freePort, type RedisServer, startRedisServer } from '@taskgate/dev-redis';
import { Redis } from 'ioredis';
import type { BenchConfig } from '../lib/config.js';
import { LeanSubject } from '../lib/lean-client.js';
import { type BenchProcess, type ProcessSet, waitForLog, waitUntil } from '../lib/processes.js';

/** FastMCP+Docket: its private Redis, the server process (embedded Docket worker) and one `fastmcp tasks worker`. */
export interface FastmcpSystem {
  readonly redisServer: RedisServer;
  /** An admin connection (INFO). */
  readonly redis: Redis;
  readonly server: BenchProcess;
  readonly worker: BenchProcess;
  /** The lean client, polling `tasks/get` at the advertised pollInterval before `tasks/result`. */
  readonly lean: LeanSubject;
}

/** The virtual environment scripts/lib/tools.sh `ensure_fastmcp_venv` installs FastMCP into. */
export function fastmcpVenv(root: string): string {
  const { TASKGATE_TOOLS_DIR: tools = join(root, '.tools') } = process.env;
  return join(tools, 'fastmcp-venv');
}

/**
 * Starts FastMCP+Docket as its docs set it up: `python bench/fixtures/fastmcp_server.py` serving Streamable
 * HTTP, and `fastmcp tasks worker` on the same file, both on a private redis-server with Docket's concurrency
 * equal to taskgate's worker concurrency (each process's worker). Python processes are stopped by pid.
 */
export async function startFastmcp(config: BenchConfig, processes: ProcessSet, root: string): Promise<FastmcpSystem> {
  const venv = fastmcpVenv(root);
  const python = join(venv, 'bin', 'python');
  if (!existsSync(python)) throw new Error(`no FastMCP virtual environment at ${venv} (scripts/bench installs it)`);
  const redisServer = await startRedisServer();
  processes.add('fastmcp redis-server', () => redisServer.stop());
  const redis = new Redis(redisServer.url, { maxRetriesPerRequest: null });
  processes.add('fastmcp admin connection', async () => void (await redis.quit().catch(() => redis.disconnect())));
  const port = await freePort();
  const script = join(root, 'bench', 'fixtures', 'fastmcp_server.py');
  const env = {
    PORT: String(port),
    FASTMCP_DOCKET_URL: `redis://${redisServer.host}:${redisServer.port}/0`,
    FASTMCP_DOCKET_CONCURRENCY: String(config.concurrency),
    FASTMCP_LOG_LEVEL: 'WARNING',
    PYTHONUNBUFFERED: '1',
  };
  const server = processes.spawn('fastmcp-server', python, [script], env);
  const worker = processes.spawn('fastmcp-worker', join(venv, 'bin', 'fastmcp'), ['tasks', 'worker', script], env);
  const url = `http://127.0.0.1:${port}/mcp`;
  await Promise.all([
    waitUntil(
      'fastmcp-server to serve',
      async () => {
        const response = await fetch(url, { signal: AbortSignal.timeout(1000) });
        await response.body?.cancel();
        return true;
      },
      { proc: server, timeoutMs: 60_000, intervalMs: 200 },
    ),
    waitForLog(worker, /Starting worker/),
  ]);
  // At 200 in flight its Redis connection pool refuses calls (`Too many connections`): b runs it at 50 only.
  const lean = new LeanSubject('fastmcp', url, [server.pid, worker.pid, redisServer.pid], 'poll', 50);
  processes.add('fastmcp lean client', () => lean.destroy());
  return { redisServer, redis, server, worker, lean };
}

/** `fastmcp 3.4.7, pydocket 0.27.2`: the versions installed in the virtual environment (from their dist-info). */
export function fastmcpVersions(root: string): string {
  const lib = join(fastmcpVenv(root), 'lib');
  const found: string[] = [];
  for (const python of existsSync(lib) ? readdirSync(lib) : []) {
    for (const entry of readdirSync(join(lib, python, 'site-packages'))) {
      const match = /^(fastmcp|pydocket)-([^-]+)\.dist-info$/.exec(entry);
      if (match !== null) found.push(`${match[1]} ${match[2]}`);
    }
  }
  return found.sort().join(', ') || 'not installed';
}
