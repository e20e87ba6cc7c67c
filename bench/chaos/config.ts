import { join } from 'node:path';

/** What one chaos run does: its topology, its load, its fault schedule and its time bounds. */
export interface ChaosConfig {
  readonly quick: boolean;
  readonly gateways: number;
  readonly workers: number;
  readonly sessions: number;
  readonly seed: number;
  /** Fault-free phase at the start (the "without faults" latency). */
  readonly warmupMs: number;
  /** The phase with faults; no task is created after it. */
  readonly faultsMs: number;
  /** After the faults: how long in-flight tasks may take to settle before the check. */
  readonly graceMs: number;
  /** Stop creating tasks once this many were acknowledged (the run still ends at its deadline). */
  readonly maxTasks: number;
  /** Time between two kill -9 of a random gateway or worker (each restarted at once). */
  readonly killEveryMs: number;
  /** Time between two toxics on the Redis link, and how long each lasts. */
  readonly toxicEveryMs: number;
  readonly toxicForMs: number;
  /** Rolling SIGTERM restarts of every gateway during the faults. */
  readonly rollingRestarts: number;
  /** Redis restarts (SIGKILL, started again on the same port and append-only file) during the faults. */
  readonly redisRestarts: number;
  /** BullMQ lock and stalled-check intervals of the workers: how soon a killed worker's task is noticed. */
  readonly crashDetectMs: number;
  /** Where the JSON record goes. */
  readonly json: string;
  /** LOG_LEVEL of the gateways and workers (their logs are kept when the run fails). */
  readonly logLevel: string;
}

export const USAGE = `Usage: bash scripts/chaos [--quick] [options]
  --quick               ~60 s: a few hundred tasks, a handful of kills, one Redis restart
  --gateways N          gateway processes behind HAProxy (default 3)
  --workers N           worker processes (default 2)
  --sessions K          client sessions creating tasks (default 20)
  --seed S              seed of the fault schedule and the task mix (default 1)
  --warmup-s S          fault-free phase (default 30; quick 6)
  --faults-s S          phase with faults (default 600; quick 30)
  --grace-s S           settling time after the faults (default 40; quick 20)
  --max-tasks N         stop creating tasks after N acknowledged (default 100000)
  --kill-every-s S      kill -9 period; the next kill waits for the restart (default 3)
  --toxic-every-s S     Toxiproxy toxic period (default 7; quick 5)
  --toxic-for-s S       how long each toxic lasts (default 2)
  --rolling-restarts N  SIGTERM rolling restarts of all gateways (default 2; quick 1)
  --redis-restarts N    Redis restarts mid-run (default 1)
  --crash-detect-ms MS  workers' BullMQ lock duration and stalled interval (default 5000)
  --json PATH           where to write the JSON record (default bench/results/chaos-latest[-quick].json)
  --log-level L         LOG_LEVEL of gateways and workers, logs kept when the run fails (default warn)
  --partitions          the partition run instead (network namespaces; its flags: --partitions --help)
  --help`;

const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error'];

const integer = (flag: string, value: string | undefined, min: number): number => {
  const parsed = Number(value);
  if (value === undefined || !Number.isInteger(parsed) || parsed < min) {
    throw new Error(`${flag} needs an integer ≥ ${min}, got ${value === undefined ? 'nothing' : `'${value}'`}`);
  }
  return parsed;
};

/** Parses the command line; throws `USAGE` for --help and a message naming the flag for bad input. */
export function parseChaosConfig(argv: readonly string[], root: string): ChaosConfig {
  const quick = argv.includes('--quick');
  const values: Record<string, number> = {
    gateways: 3,
    workers: 2,
    sessions: 20,
    seed: 1,
    'warmup-s': quick ? 6 : 30,
    'faults-s': quick ? 30 : 600,
    'grace-s': quick ? 20 : 40,
    'max-tasks': 100_000,
    'kill-every-s': 3,
    'toxic-every-s': quick ? 5 : 7,
    'toxic-for-s': 2,
    'rolling-restarts': quick ? 1 : 2,
    'redis-restarts': 1,
    'crash-detect-ms': 5000,
  };
  const minimum: Record<string, number> = { gateways: 1, workers: 1, sessions: 1, 'crash-detect-ms': 1000 };
  let json = join(root, 'bench', 'results', quick ? 'chaos-latest-quick.json' : 'chaos-latest.json');
  let logLevel = 'warn';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') throw new Error(USAGE);
    if (arg === '--quick') continue;
    if (arg === '--json') {
      const path = argv[++i];
      if (path === undefined || path === '') throw new Error('--json needs a path');
      json = path;
      continue;
    }
    if (arg === '--log-level') {
      const level = argv[++i];
      if (level === undefined || !LOG_LEVELS.includes(level)) {
        throw new Error(`--log-level needs one of ${LOG_LEVELS.join(', ')}, got '${level ?? ''}'`);
      }
      logLevel = level;
      continue;
    }
    const name = arg.replace(/^--/, '');
    if (!arg.startsWith('--') || !(name in values)) throw new Error(`unknown argument '${arg}'`);
    values[name] = integer(arg, argv[++i], minimum[name] ?? 0);
  }
  const v = (name: string): number => values[name] as number;
  return {
    quick,
    gateways: v('gateways'),
    workers: v('workers'),
    sessions: v('sessions'),
    seed: v('seed'),
    warmupMs: v('warmup-s') * 1000,
    faultsMs: v('faults-s') * 1000,
    graceMs: v('grace-s') * 1000,
    maxTasks: v('max-tasks'),
    killEveryMs: Math.max(500, v('kill-every-s') * 1000),
    toxicEveryMs: Math.max(500, v('toxic-every-s') * 1000),
    toxicForMs: v('toxic-for-s') * 1000,
    rollingRestarts: v('rolling-restarts'),
    redisRestarts: v('redis-restarts'),
    crashDetectMs: v('crash-detect-ms'),
    json,
    logLevel,
  };
}

/** A small seeded generator (mulberry32): the same seed gives the same fault schedule and task mix. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
