import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import {
  freePort,
  type Haproxy,
  type RedisServer,
  startDurableRedis,
  startHaproxy,
  startToxiproxy,
  type Toxiproxy,
  type ToxiproxyProxy,
} from '@taskgate/test-harness';
import { answers200, type BenchProcess, type ProcessSet, waitUntil } from '../lib/processes.js';
import type { ChaosConfig } from './config.js';

/** One gateway or worker slot: a fixed port (gateways) and the process that fills it now. */
export interface Slot {
  readonly kind: 'gateway' | 'worker';
  readonly index: number;
  /** The gateway's port (HAProxy's backend); a worker's metrics port. */
  readonly port: number;
  proc: BenchProcess;
  /** Processes started in this slot so far (1 = the first). */
  incarnations: number;
  /** The slot's restart under way: restarts of one slot never overlap. */
  busy: Promise<void>;
  /** Its process is being stopped on purpose (not an exit to restart from). */
  stopping: boolean;
}

/** The chaos run's deployment: Redis (append-only, fsync always) behind Toxiproxy, gateways behind HAProxy, workers. */
export interface ChaosTopology {
  readonly redisDir: string;
  /** The redis-server running now (a new one after each restart). */
  readonly redis: RedisServer;
  readonly toxiproxy: Toxiproxy;
  /** The Redis link every taskgate process uses. */
  readonly link: ToxiproxyProxy;
  readonly haproxy: Haproxy;
  /** `http://127.0.0.1:<haproxy>/mcp` */
  readonly url: string;
  readonly gateways: Slot[];
  readonly workers: Slot[];
  /** Log files of every gateway and worker process started, restarts included. */
  readonly logFiles: () => string[];
  /** Processes that exited before they were ready (started again), and that exited unasked later (started again). */
  readonly exits: { atStart: number; unasked: number };
  /** Kills the slot's process (SIGKILL) or stops it (SIGTERM, drain), then starts a new one; resolves once it is ready. */
  restart(slot: Slot, signal: 'SIGKILL' | 'SIGTERM'): Promise<void>;
  /** SIGKILL of redis-server, then a new one on the same port and append-only file; resolves once it answers. */
  restartRedis(downMs: number): Promise<void>;
}

const MCP_HOST = '127.0.0.1';

/** Starts everything; registers each part with `processes`, which stops them by pid. */
export async function startChaosTopology(
  config: ChaosConfig,
  processes: ProcessSet,
  root: string,
): Promise<ChaosTopology> {
  const redisDir = mkdtempSync(join(processes.logDir, 'redis-'));
  let redis = await startDurableRedis(redisDir);
  processes.add('redis-server', () => redis.stop());
  const toxiproxy = await startToxiproxy();
  processes.add('toxiproxy-server', () => toxiproxy.stop());
  const link = await toxiproxy.createProxy('redis', `127.0.0.1:${redis.port}`);
  const crash = String(config.crashDetectMs);
  const env: Record<string, string> = {
    REDIS_URL: `redis://127.0.0.1:${link.port}`,
    TASKGATE_REDIS_CLUSTER_NODES: '',
    TASKGATE_REDIS_SENTINELS: '',
    TASKGATE_KEY_PREFIX: 'chaos',
    TASKGATE_CURSOR_SECRET: randomBytes(24).toString('base64url'),
    LOG_LEVEL: config.logLevel,
    // The run measures delivery under faults, not the per-principal rate limits.
    TASKGATE_RATE_LIMIT_CREATE: 'off',
    TASKGATE_RATE_LIMIT_READ: 'off',
    TASKGATE_RATE_LIMIT_CANCEL: 'off',
    TASKGATE_MAX_ACTIVE_TASKS: '1000',
    TASKGATE_DRAIN_TIMEOUT_MS: '5000',
    TASKGATE_LOCK_DURATION_MS: crash,
    TASKGATE_STALLED_INTERVAL_MS: crash,
    TASKGATE_SSE_RETRY_MS: '200',
  };
  const cli = `${root}packages/cli/src/run.ts`;
  const logFiles: string[] = [];

  const spawn = (slot: Pick<Slot, 'kind' | 'index' | 'port'>, incarnation: number): BenchProcess => {
    const name = `${slot.kind}-${slot.index}.${incarnation}`;
    const proc =
      slot.kind === 'gateway'
        ? processes.spawnNode(name, cli, ['gateway'], { ...env, HOST: MCP_HOST, PORT: String(slot.port) })
        : processes.spawnNode(name, cli, ['worker', '--tools', `${root}bench/chaos/tools.ts`], {
            ...env,
            TASKGATE_METRICS_PORT: String(slot.port),
          });
    logFiles.push(proc.logFile);
    return proc;
  };
  // A gateway's /readyz, a worker's (its metrics port): 200 once it serves, resp. takes jobs.
  const ready = (slot: Slot): Promise<void> =>
    waitUntil(`${slot.proc.name} /readyz`, () => answers200(`http://127.0.0.1:${slot.port}/readyz`), {
      proc: slot.proc,
      timeoutMs: 60_000,
      intervalMs: 100,
    });
  const exits = { atStart: 0, unasked: 0 };
  /**
   * Starts the slot's next process and waits for it to be ready; one that exits first (a gateway or worker
   * whose start-up check found Redis unreachable) is started again a second later, as a supervisor would.
   */
  const startUntilReady = async (slot: Slot): Promise<void> => {
    for (let attempt = 1; ; attempt++) {
      slot.incarnations += 1;
      const proc = spawn(slot, slot.incarnations);
      let exited = false;
      void proc.exited.then(() => {
        exited = true;
      });
      slot.proc = proc;
      try {
        await ready(slot);
      } catch (error) {
        if (!exited || attempt >= 20) throw error;
        exits.atStart += 1;
        await new Promise((resolve) => setTimeout(resolve, 1000));
        continue;
      }
      // A process that ends without being asked to is started again too (counted).
      void proc.exited.then(() => {
        if (slot.proc !== proc || slot.stopping || stopped) return;
        exits.unasked += 1;
        const next = slot.busy.then(() => startUntilReady(slot));
        slot.busy = next.catch(() => {});
      });
      return;
    }
  };
  let stopped = false;
  processes.add('chaos supervision', async () => {
    stopped = true;
  });
  const startSlot = async (kind: Slot['kind'], index: number): Promise<Slot> => {
    const port = await freePort();
    const slot: Slot = {
      kind,
      index,
      port,
      proc: undefined as never,
      incarnations: 0,
      busy: Promise.resolve(),
      stopping: false,
    };
    await startUntilReady(slot);
    return slot;
  };

  const replace = async (slot: Slot, signal: 'SIGKILL' | 'SIGTERM'): Promise<void> => {
    slot.stopping = true;
    if (signal === 'SIGKILL') {
      try {
        process.kill(slot.proc.pid, 'SIGKILL');
      } catch {
        // already gone
      }
      await slot.proc.exited;
    } else {
      await slot.proc.stop(15_000);
    }
    slot.stopping = false;
    await startUntilReady(slot);
  };

  const [gateways, workers] = await Promise.all([
    Promise.all(Array.from({ length: config.gateways }, (_, i) => startSlot('gateway', i))),
    Promise.all(Array.from({ length: config.workers }, (_, i) => startSlot('worker', i))),
  ]);
  const haproxy = await startHaproxy({
    backends: gateways.map((slot) => ({ port: slot.port })),
    healthCheck: { path: '/readyz', host: '127.0.0.1', intervalMs: 200 },
  });
  processes.add('haproxy', () => haproxy.stop());
  await haproxy.waitForStates(
    gateways.map(() => 'UP'),
    20_000,
  );

  return {
    redisDir,
    get redis() {
      return redis;
    },
    toxiproxy,
    link,
    haproxy,
    url: `${haproxy.origin}/mcp`,
    gateways,
    workers,
    logFiles: () => [...logFiles],
    exits,
    restart(slot, signal) {
      const next = slot.busy.then(() => replace(slot, signal));
      slot.busy = next.catch(() => {});
      return next;
    },
    async restartRedis(downMs) {
      const port = redis.port;
      await redis.stop();
      await new Promise((resolve) => setTimeout(resolve, downMs));
      redis = await startDurableRedis(redisDir, { port });
    },
  };
}
