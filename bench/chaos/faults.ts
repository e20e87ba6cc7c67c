/**
 * The fault schedule, deterministic from the seed: kill -9 of a random gateway or worker every `killEveryMs`
 * (restarted at once; the next fault waits until it is ready again), rolling SIGTERM restarts of every gateway,
 * Redis killed and started again on its append-only file, and toxics on the Redis link through Toxiproxy.
 */
import type { Toxic, ToxicType } from '@taskgate/test-harness';
import { type ChaosConfig, seededRandom } from './config.js';
import { sleep } from './rpc.js';
import type { ChaosTopology, Slot } from './topology.js';

export interface FaultLog {
  /** kill -9 of a gateway / a worker. */
  readonly kills: { gateway: number; worker: number };
  /** Rolling restarts done (each one SIGTERM of every gateway, one at a time). */
  rollingRestarts: number;
  redisRestarts: number;
  /** Toxics applied, by type. */
  readonly toxics: Record<string, number>;
  /** What happened when, in ms since the faults began. */
  readonly timeline: Array<{ atMs: number; what: string }>;
}

const TOXICS: readonly ToxicType[] = ['latency', 'reset_peer', 'timeout', 'bandwidth'];

function toxicOf(type: ToxicType, random: () => number, n: number): Toxic {
  const name = `chaos-${type}-${n}`;
  switch (type) {
    case 'latency':
      return { name, type, attributes: { latency: 100 + Math.floor(random() * 200), jitter: 50 } };
    case 'reset_peer':
      return { name, type, attributes: { timeout: 200 + Math.floor(random() * 800) } };
    case 'timeout':
      return { name, type, attributes: { timeout: 500 + Math.floor(random() * 1000) } };
    default:
      return { name, type, attributes: { rate: 20 + Math.floor(random() * 30) } };
  }
}

/** Runs faults from now until `until`; returns what it did. A process that does not come back fails the run. */
export async function runFaults(
  topology: ChaosTopology,
  config: ChaosConfig,
  until: number,
  say: (text: string) => void,
): Promise<FaultLog> {
  const log: FaultLog = {
    kills: { gateway: 0, worker: 0 },
    rollingRestarts: 0,
    redisRestarts: 0,
    toxics: {},
    timeline: [],
  };
  const start = Date.now();
  const note = (what: string): void => {
    log.timeline.push({ atMs: Date.now() - start, what });
    say(`  +${((Date.now() - start) / 1000).toFixed(1)} s ${what}`);
  };
  const span = until - start;
  // Redis restarts and rolling restarts spread over the phase, never in its last 15 %.
  const redisAt = Array.from(
    { length: config.redisRestarts },
    (_, i) => start + ((i + 1) / (config.redisRestarts + 1)) * span * 0.85,
  );
  const rollingAt = Array.from(
    { length: config.rollingRestarts },
    (_, i) => start + ((i + 0.5) / config.rollingRestarts) * span * 0.7,
  );
  const processRandom = seededRandom(config.seed);
  const toxicRandom = seededRandom(config.seed * 31 + 17);

  let rolling = false;
  const processFaults = async (): Promise<void> => {
    let next = start + config.killEveryMs;
    while (Date.now() < until) {
      await sleep(Math.max(0, Math.min(next, until) - Date.now()));
      if (Date.now() >= until) break;
      if (redisAt.length > 0 && Date.now() >= (redisAt[0] as number)) {
        redisAt.shift();
        note('redis-server: SIGKILL, restarted on its append-only file after 1 s');
        await topology.restartRedis(1000);
        log.redisRestarts += 1;
        note('redis-server: back');
      } else {
        // During a rolling restart only workers are killed: one gateway at a time is ever down.
        const slots: Slot[] = [...(rolling ? [] : topology.gateways), ...topology.workers];
        const slot = slots[Math.floor(processRandom() * slots.length)] as Slot;
        note(`kill -9 ${slot.kind} ${slot.index} (pid ${slot.proc.pid})`);
        await topology.restart(slot, 'SIGKILL');
        log.kills[slot.kind] += 1;
      }
      next = Math.max(next + config.killEveryMs, Date.now() + 500);
    }
  };

  const rollingRestarts = async (): Promise<void> => {
    for (const at of rollingAt) {
      await sleep(Math.max(0, at - Date.now()));
      if (Date.now() >= until) break;
      rolling = true;
      note('rolling restart of every gateway (SIGTERM, one at a time)');
      for (const slot of topology.gateways) await topology.restart(slot, 'SIGTERM');
      rolling = false;
      log.rollingRestarts += 1;
      note('rolling restart done');
    }
  };

  const toxicFaults = async (): Promise<void> => {
    let n = 0;
    while (Date.now() + config.toxicEveryMs < until) {
      await sleep(config.toxicEveryMs - config.toxicForMs);
      const type = TOXICS[n % TOXICS.length] as ToxicType;
      const toxic = toxicOf(type, toxicRandom, n++);
      note(`toxic ${type} ${JSON.stringify(toxic.attributes)} on the Redis link for ${config.toxicForMs} ms`);
      try {
        await topology.link.addToxic(toxic);
        log.toxics[type] = (log.toxics[type] ?? 0) + 1;
        await sleep(config.toxicForMs);
        await topology.link.removeToxic(toxic.name);
      } catch (error) {
        // Toxiproxy's API did not answer in time: the toxic goes at the latest with the reset below.
        note(`toxiproxy API: ${(error as Error).message}`);
        await topology.toxiproxy.reset().catch(() => {});
      }
    }
  };

  await Promise.all([processFaults(), rollingRestarts(), toxicFaults()]);
  await topology.toxiproxy.reset();
  return log;
}
