import { parseArgs } from 'node:util';

/** One closed-loop load level of workload b. */
export interface LoadLevel {
  readonly inFlight: number;
  /** Tasks in all; a run stops early after `maxMs`. */
  readonly total: number;
  readonly maxMs: number;
}

/** Workload f's size: owners, tasks in all (stops early after `maxMs`), in flight. */
export interface ShardsLoad {
  readonly owners: number;
  readonly tasks: number;
  readonly inFlight: number;
  readonly maxMs: number;
}

/** Workload ids, as the issue names them; f (single node beside a Redis Cluster) runs only when asked for. */
export type WorkloadId = 'a' | 'b' | 'c' | 'd' | 'e' | 'f';
export const WORKLOADS: readonly WorkloadId[] = ['a', 'b', 'c', 'd', 'e', 'f'];
const DEFAULT_WORKLOADS: readonly WorkloadId[] = ['a', 'b', 'c', 'd', 'e'];

/** Everything a bench run is told. */
export interface BenchConfig {
  readonly quick: boolean;
  /** taskgate gateway processes (more than one: the harness's round-robin proxy spreads the requests). */
  readonly gateways: number;
  /** taskgate worker processes. */
  readonly workers: number;
  /** Jobs one worker process runs at once, taskgate and raw BullMQ alike. */
  readonly concurrency: number;
  /** In-flight requests per MCP client (session); more in flight open more sessions. */
  readonly perSession: number;
  readonly warmup: number;
  /**
   * a and b measure each level in this many rounds, every subject once per round, the order reversed every other
   * round: subjects measured one after the other see the machine's drift alike.
   */
  readonly rounds: number;
  readonly latency: LoadLevel;
  readonly loads: readonly LoadLevel[];
  readonly waiters: number;
  readonly listSizes: readonly number[];
  readonly listSamples: number;
  readonly costTasks: number;
  /** Workload f: owners, tasks and in flight, the same on the single node and on the cluster. */
  readonly shards: ShardsLoad;
  readonly only: ReadonlySet<WorkloadId>;
  /** Run FastMCP+Docket beside the others in a, b and e (default: the full run, not --quick). */
  readonly fastmcp: boolean;
  /** Tasks of e for FastMCP+Docket: each takes at least its 5 s pollInterval. */
  readonly fastmcpCostTasks: number;
  /** Write a CPU profile per gateway and worker process into this folder and print their top functions. */
  readonly profileDir?: string;
  /** Where the JSON result goes. */
  readonly outDir: string;
  /** An earlier commit (any git ref) run beside this checkout in a and b, for the before/after table. */
  readonly before?: string;
}

export const USAGE = `usage: bash scripts/bench [--quick] [--gateways N] [--workers N] [--concurrency N]
                         [--waiters N] [--list-sizes 1000,100000,1000000] [--only a,b,c,d,e,f] [--cluster]
                         [--fastmcp | --no-fastmcp] [--rounds N] [--profile] [--before REF] [--out DIR]

  --quick        small counts (CI): checks only that every figure is produced and sane
  --gateways N   taskgate gateway processes (default 1; more go behind a round-robin proxy)
  --workers N    taskgate worker processes (default 1)
  --concurrency  jobs per worker process, taskgate and raw BullMQ alike (default 50)
  --only         run only these workloads (a latency, b throughput, c waiters, d tasks/list, e Redis cost,
                 f single node beside a 3-master Redis Cluster); default a–e
  --cluster      workload f alone (with --only: f as well): tasks/s, Redis commands per task per shard and
                 keys per shard, one redis-server beside a Redis Cluster of 3 masters + 3 replicas
  --fastmcp      run FastMCP+Docket (the distributed peer) in a, b and e; on by default, off with --quick
  --no-fastmcp   leave FastMCP+Docket out
  --rounds N     a and b measure each level in N rounds, every subject once a round, the order reversed
                 every other round (default 4, quick 2; 1: each subject's whole load at once, one after the other)
  --profile      CPU profile of every gateway and worker process (node --cpu-prof) into the results
                 folder; prints the top 10 functions by self time of each
  --before REF   also run the commit REF's taskgate (unpacked under .tools/bench-before/) in a and b, and print
                 a before/after table: its figures beside this checkout's, measured in the same run`;

const positiveInt = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined) return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got '${raw}'`);
  return value;
};

/** Parses the command line into a config; throws with a message on bad input. */
export function parseConfig(argv: readonly string[], rootDir: string): BenchConfig {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: 'boolean', default: false },
      gateways: { type: 'string' },
      workers: { type: 'string' },
      concurrency: { type: 'string' },
      rounds: { type: 'string' },
      waiters: { type: 'string' },
      'list-sizes': { type: 'string' },
      only: { type: 'string' },
      cluster: { type: 'boolean', default: false },
      out: { type: 'string' },
      fastmcp: { type: 'boolean' },
      'no-fastmcp': { type: 'boolean', default: false },
      profile: { type: 'boolean', default: false },
      before: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) throw new Error(USAGE);
  const outDir = values.out ?? `${rootDir}bench/results`;
  const quick = values.quick === true;
  const named = values.only ?? (values.cluster === true ? 'f' : DEFAULT_WORKLOADS.join(','));
  const only = new Set(named.split(',').map((id) => id.trim()));
  for (const id of only) if (!WORKLOADS.includes(id as WorkloadId)) throw new Error(`--only: unknown workload '${id}'`);
  if (values.cluster === true) only.add('f');
  const listSizes = (values['list-sizes'] ?? (quick ? '1000,10000' : '1000,100000,1000000'))
    .split(',')
    .map((size) => positiveInt('list-sizes', size, 0));
  return {
    quick,
    gateways: positiveInt('gateways', values.gateways, 1),
    workers: positiveInt('workers', values.workers, 1),
    concurrency: positiveInt('concurrency', values.concurrency, 50),
    perSession: 25,
    warmup: quick ? 20 : 100,
    rounds: positiveInt('rounds', values.rounds, quick ? 2 : 4),
    latency: quick ? { inFlight: 1, total: 50, maxMs: 10_000 } : { inFlight: 1, total: 1000, maxMs: 45_000 },
    loads: quick
      ? [
          { inFlight: 50, total: 200, maxMs: 15_000 },
          { inFlight: 200, total: 400, maxMs: 15_000 },
        ]
      : [
          { inFlight: 50, total: 6000, maxMs: 30_000 },
          { inFlight: 200, total: 12_000, maxMs: 30_000 },
        ],
    waiters: positiveInt('waiters', values.waiters, quick ? 500 : 10_000),
    listSizes,
    listSamples: quick ? 20 : 100,
    costTasks: quick ? 200 : 2000,
    // Enough owners that their share per shard is within a few % (each owner's slot tag is random).
    shards: quick
      ? { owners: 150, tasks: 600, inFlight: 50, maxMs: 8000 }
      : { owners: 300, tasks: 1500, inFlight: 50, maxMs: 15_000 },
    only: only as ReadonlySet<WorkloadId>,
    fastmcp: values['no-fastmcp'] !== true && (values.fastmcp ?? !quick),
    fastmcpCostTasks: quick ? 100 : 250,
    ...(values.profile === true && { profileDir: `${outDir}/profiles` }),
    outDir,
    ...(values.before !== undefined && { before: values.before }),
  };
}
