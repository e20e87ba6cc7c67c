import { join } from 'node:path';

/** `async`: Redis's own asynchronous replication; `wait`: TASKGATE_REDIS_WAIT_REPLICAS=1 (the durable setting). */
export type Replication = 'async' | 'wait';

/** What one partition run does: topology, load, fault schedule, time bounds, where its files go. */
export interface PartitionConfig {
  readonly quick: boolean;
  readonly seed: number;
  readonly replication: Replication;
  readonly gateways: number;
  readonly workers: number;
  /** Client lanes (one operation at a time each), spread over `principals` token holders. */
  readonly lanes: number;
  readonly principals: number;
  readonly warmupMs: number;
  /** The phase with faults: one fault at a time, each healed before the next. */
  readonly faultsMs: number;
  /** After the faults: in-flight tasks settle, then every acknowledged task is read back. */
  readonly graceMs: number;
  readonly json: string;
  /** The run's history: one JSON line per client operation. */
  readonly history: string;
  readonly logLevel: string;
}

export const PARTITIONS_USAGE = `Usage: bash scripts/chaos --partitions [--quick] [options]
  --quick               under 3 minutes: 8 kinds of fault first (cuts, one-way loss, failover, pauses, a kill)
  --seed S              seed of the fault schedule and the operation mix (default 1)
  --replication R       wait (TASKGATE_REDIS_WAIT_REPLICAS=1, default) or async
  --gateways N          gateways, each in its own namespace (default 2)
  --workers N           workers, each in its own namespace (default 2)
  --lanes N             client lanes, one operation at a time each (default 12; quick 8)
  --warmup-s S          fault-free phase (default 10; quick 5)
  --faults-s S          phase with faults (default 600; quick 100)
  --grace-s S           settling time after the faults (default 30; quick 15)
  --json PATH           the record (default bench/results/partitions-latest[-quick][-async].json)
  --history PATH        the operations, JSON lines (default: beside the record, .history.jsonl)
  --log-level L         LOG_LEVEL of gateways and workers (default warn)
  --help`;

/** Parses the flags after `--partitions`; throws `PARTITIONS_USAGE` for --help and a message naming a bad flag. */
export function parsePartitionConfig(argv: readonly string[], root: string): PartitionConfig {
  const quick = argv.includes('--quick');
  const numbers: Record<string, number> = {
    seed: 1,
    gateways: 2,
    workers: 2,
    lanes: quick ? 8 : 12,
    'warmup-s': quick ? 5 : 10,
    'faults-s': quick ? 100 : 600,
    'grace-s': quick ? 15 : 30,
  };
  const minimum: Record<string, number> = { gateways: 1, workers: 1, lanes: 1, 'faults-s': 1 };
  let replication: Replication = 'wait';
  let json: string | undefined;
  let history: string | undefined;
  let logLevel = 'warn';
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] as string;
    if (arg === '--help' || arg === '-h') throw new Error(PARTITIONS_USAGE);
    if (arg === '--quick' || arg === '--partitions') continue;
    const value = argv[i + 1];
    if (arg === '--replication') {
      if (value !== 'async' && value !== 'wait') throw new Error(`--replication needs wait or async, got '${value}'`);
      replication = value;
    } else if (arg === '--json' || arg === '--history') {
      if (value === undefined || value === '') throw new Error(`${arg} needs a path`);
      if (arg === '--json') json = value;
      else history = value;
    } else if (arg === '--log-level') {
      if (!['trace', 'debug', 'info', 'warn', 'error'].includes(value ?? '')) {
        throw new Error(`--log-level needs trace, debug, info, warn or error, got '${value ?? ''}'`);
      }
      logLevel = value as string;
    } else {
      const name = arg.replace(/^--/, '');
      if (!arg.startsWith('--') || !(name in numbers)) throw new Error(`unknown argument '${arg}'`);
      const parsed = Number(value);
      const min = minimum[name] ?? 0;
      if (!Number.isInteger(parsed) || parsed < min)
        throw new Error(`${arg} needs an integer ≥ ${min}, got '${value}'`);
      numbers[name] = parsed;
    }
    i++;
  }
  const n = (name: string): number => numbers[name] as number;
  const base = `partitions-latest${quick ? '-quick' : ''}${replication === 'async' ? '-async' : ''}`;
  const record = json ?? join(root, 'bench', 'results', `${base}.json`);
  return {
    quick,
    seed: n('seed'),
    replication,
    gateways: n('gateways'),
    workers: n('workers'),
    lanes: n('lanes'),
    principals: Math.max(1, Math.ceil(n('lanes') / 4)),
    warmupMs: n('warmup-s') * 1000,
    faultsMs: n('faults-s') * 1000,
    graceMs: n('grace-s') * 1000,
    json: record,
    history: history ?? `${record.replace(/\.json$/, '')}.history.jsonl`,
    logLevel,
  };
}
