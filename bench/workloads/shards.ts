import type { Redis } from 'ioredis';
import type { ShardsLoad } from '../lib/config.js';
import { callsDelta, commandCalls, topCounts, total } from '../lib/redis-stats.js';
import { closedLoop } from '../lib/stats.js';
import type { ShardedTaskgate } from '../systems/taskgate-cluster.js';

/** How many of each kind of key one shard holds after the run. */
export interface KeyCounts {
  /** DBSIZE. */
  readonly all: number;
  /** taskgate's per-owner keys, `tg:{<4-character owner tag>}:…` (tasks, indexes, sessions, feeds, …). */
  readonly owner: number;
  /** Of those, session records (`…:session:<digest>`): one per owner, as each session is its own owner. */
  readonly sessions: number;
  /** BullMQ's, `tg:bull:{<queue>}:…`: one queue is one slot by design. */
  readonly bullmq: number;
  /** Process-wide keys with a tag of their own (`tg:{catalog}:…`, rate limits). */
  readonly processWide: number;
}

/** What one master did during the run and holds after it. */
export interface ShardFigures {
  readonly address: string;
  /** INFO commandstats delta on this master per task (Lua-run included), its idle traffic subtracted. */
  readonly commandsPerTask: number;
  readonly keys: KeyCounts;
  /** The most frequent commands per task on this master. */
  readonly breakdown: string;
}

/** f. One topology: throughput, and per master what each task cost and which keys stayed. */
export interface ShardsResult {
  readonly topology: string;
  /** Owners (sessions; auth is off, so each session is its own owner) the tasks were spread over. */
  readonly owners: number;
  readonly tasks: number;
  readonly inFlight: number;
  readonly throughput: number;
  readonly p50: number;
  readonly p99: number;
  readonly errors: number;
  /** All masters together. */
  readonly commandsPerTask: number;
  readonly shards: readonly ShardFigures[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Cluster bookkeeping of the admin connections and replicas, left out of the counts like INFO is. */
const CLUSTER_ADMIN = new Set(['scan', 'dbsize', 'replconf', 'cluster|slots', 'cluster|nodes', 'cluster|info']);
const OWNER_KEY = /^tg:\{[A-Za-z0-9_-]{4}\}:/;
const SESSION_RECORD = /^tg:\{[A-Za-z0-9_-]{4}\}:session:[A-Za-z0-9_-]+$/;

function calls(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = callsDelta(before, after);
  for (const name of CLUSTER_ADMIN) delta.delete(name);
  return delta;
}

/** Counts one master's keys by kind (SCAN; a cluster master holds only the keys of its own slots). */
export async function countKeys(redis: Redis): Promise<KeyCounts> {
  let [owner, sessions, bullmq, processWide] = [0, 0, 0, 0];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      if (key.startsWith('tg:bull:')) bullmq++;
      else if (OWNER_KEY.test(key)) {
        owner++;
        if (SESSION_RECORD.test(key)) sessions++;
      } else processWide++;
    }
  } while (cursor !== '0');
  return { all: await redis.dbsize(), owner, sessions, bullmq, processWide };
}

/**
 * f. Opens `owners` sessions (each its own owner, with its own slot tag), warms up, then runs `tasks`
 * create → result operations at `inFlight`, each on the next session in turn so every owner gets the same
 * share. Reads INFO commandstats on every master before and after (idle traffic, measured for 1 s first,
 * subtracted) and counts every master's keys by kind once the load is done, before the sessions close.
 */
export async function runShards(target: ShardedTaskgate, load: ShardsLoad): Promise<ShardsResult> {
  const { subject, shards } = target;
  await subject.prepare(load.owners);
  let next = 0;
  const run = (): Promise<void> => subject.run(next++);
  await closedLoop({ inFlight: load.inFlight, total: Math.max(load.owners, load.inFlight * 4), maxMs: 20_000, run });

  const snapshot = (): Promise<Map<string, number>[]> => Promise.all(shards.map(({ redis }) => commandCalls(redis)));
  const idle0 = await snapshot();
  const idleStart = performance.now();
  await sleep(1000);
  const idle1 = await snapshot();
  const idleMs = performance.now() - idleStart;
  const idleRates = idle0.map((before, i) => total(calls(before, idle1[i] as Map<string, number>)) / idleMs);

  next = 0;
  const before = await snapshot();
  const result = await closedLoop({ inFlight: load.inFlight, total: load.tasks, maxMs: load.maxMs, run });
  await sleep(250);
  const after = await snapshot();
  const keys = await Promise.all(shards.map(({ redis }) => countKeys(redis)));
  const tasks = Math.max(1, result.n);
  const figures = shards.map((shard, i): ShardFigures => {
    const delta = calls(before[i] as Map<string, number>, after[i] as Map<string, number>);
    const idle = (idleRates[i] ?? 0) * (result.elapsedMs + 250);
    return {
      address: shard.address,
      commandsPerTask: (total(delta) - idle) / tasks,
      keys: keys[i] as KeyCounts,
      breakdown: topCounts(delta, 8, tasks),
    };
  });
  return {
    topology: target.topology,
    owners: load.owners,
    tasks: result.n,
    inFlight: load.inFlight,
    throughput: result.throughput,
    p50: result.p50,
    p99: result.p99,
    errors: result.errors,
    commandsPerTask: figures.reduce((sum, shard) => sum + shard.commandsPerTask, 0),
    shards: figures,
  };
}

/** Largest deviation from the mean across shards, in % of the mean (0 for one shard). */
export function spreadPercent(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  if (mean === 0) return 0;
  return (Math.max(...values.map((v) => Math.abs(v - mean))) / mean) * 100;
}
