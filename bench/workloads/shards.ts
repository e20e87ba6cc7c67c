import type { Redis } from 'ioredis';
import type { ShardsLoad } from '../lib/config.js';
import { callsDelta, commandCalls, isAdminCommand, topCounts, total } from '../lib/redis-stats.js';
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
  /** Every other key: the catalog's (`tg:{catalog}:…`, a tag of its own), rate-limit counters (`tg:rl:…`). */
  readonly other: number;
}

/** Commands per task on one master by the kind of key they name (MONITOR pass), as `KeyCounts` kinds. */
export interface CommandsByKey {
  readonly owner: number;
  readonly bullmq: number;
  readonly other: number;
  /** Commands that name no key of the prefix (MULTI, EXEC, TIME, CLIENT SETNAME, …). */
  readonly none: number;
}

/** What one master did during the run and holds after it. */
export interface ShardFigures {
  readonly address: string;
  /** INFO commandstats delta on this master per task (Lua-run included), its idle traffic subtracted. */
  readonly commandsPerTask: number;
  readonly keys: KeyCounts;
  /** The same load's commands per task by the key they name, from a second, shorter pass under MONITOR. */
  readonly byKey: CommandsByKey;
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
  /** Tasks whose result came back, over every pass (warm-up, measured, MONITOR). */
  readonly completed: number;
  /** With queue shards: tasks executed (distinct ids) and those executed more than once. */
  readonly executions?: { readonly tasks: number; readonly repeated: number };
  readonly shards: readonly ShardFigures[];
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
/** Cluster bookkeeping of the admin connections and replicas, left out of the counts like INFO is. */
const CLUSTER_ADMIN = new Set(['scan', 'dbsize', 'replconf', 'cluster|slots', 'cluster|nodes', 'cluster|info']);
const OWNER_KEY = /^tg:\{[A-Za-z0-9_-]{4}\}:/;
const SESSION_RECORD = /^tg:\{[A-Za-z0-9_-]{4}\}:session:[A-Za-z0-9_-]+$/;

type KeyKind = 'owner' | 'bullmq' | 'other' | 'none';

/** The kind of the first key of the prefix among a command's arguments (an EVALSHA's first key, a channel). */
function kindOf(args: readonly string[]): KeyKind {
  const key = args.find((arg, i) => i > 0 && arg.startsWith('tg:'));
  if (key === undefined) return 'none';
  if (key.startsWith('tg:bull:')) return 'bullmq';
  return OWNER_KEY.test(key) ? 'owner' : 'other';
}

/**
 * Counts every command a master runs (clients' and Lua's) by the kind of key it names, until `stop()`, which
 * sends a marker (ECHO) over the admin connection and waits for MONITOR to show it, so that nothing still
 * queued in the MONITOR stream is lost on a busy machine.
 */
async function monitorByKey(redis: Redis): Promise<{ stop(): Promise<Record<KeyKind, number>> }> {
  const monitor = await redis.monitor();
  const counts: Record<KeyKind, number> = { owner: 0, bullmq: 0, other: 0, none: 0 };
  const marker = `bench-monitor-end-${process.pid}-${Date.now()}`;
  let seen: () => void = () => {};
  const ended = new Promise<void>((resolve) => {
    seen = resolve;
  });
  monitor.on('monitor', (_time: string, args: string[]) => {
    const name = (args[0] ?? '').toLowerCase();
    if (name === 'echo' && args[1] === marker) seen();
    if (isAdminCommand(name) || CLUSTER_ADMIN.has(name) || name === 'echo') return;
    counts[kindOf(args)]++;
  });
  return {
    async stop() {
      await redis.echo(marker);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(
          () => reject(new Error(`MONITOR on port ${redis.options.port} did not show its end marker in 10 s`)),
          10_000,
        );
      });
      try {
        await Promise.race([ended, timeout]);
      } finally {
        clearTimeout(timer);
        monitor.disconnect();
      }
      return counts;
    },
  };
}

function calls(before: Map<string, number>, after: Map<string, number>): Map<string, number> {
  const delta = callsDelta(before, after);
  for (const name of CLUSTER_ADMIN) delta.delete(name);
  return delta;
}

/** Counts one master's keys by kind (SCAN; a cluster master holds only the keys of its own slots). */
export async function countKeys(redis: Redis): Promise<KeyCounts> {
  let [owner, sessions, bullmq, other] = [0, 0, 0, 0];
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      if (key.startsWith('tg:bull:')) bullmq++;
      else if (OWNER_KEY.test(key)) {
        owner++;
        if (SESSION_RECORD.test(key)) sessions++;
      } else other++;
    }
  } while (cursor !== '0');
  return { all: await redis.dbsize(), owner, sessions, bullmq, other };
}

/**
 * f. Opens `owners` sessions (each its own owner, with its own slot tag), warms up, then runs `tasks`
 * create → result operations at `inFlight`, each on the next session in turn so every owner gets the same
 * share. Reads INFO commandstats on every master before and after (idle traffic, measured for 1 s first,
 * subtracted) and counts every master's keys by kind once the load is done, before the sessions close.
 * A second pass of a quarter as many tasks under MONITOR on every master tells which keys the commands name.
 */
export async function runShards(target: ShardedTaskgate, load: ShardsLoad): Promise<ShardsResult> {
  const { subject, shards } = target;
  await subject.prepare(load.owners);
  let next = 0;
  const run = (): Promise<void> => subject.run(next++);
  const warm = await closedLoop({
    inFlight: load.inFlight,
    total: Math.max(load.owners, load.inFlight * 4),
    maxMs: 20_000,
    run,
  });

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
  const monitored = Math.max(load.inFlight * 4, Math.floor(load.tasks / 4));
  const monitors = await Promise.all(shards.map(({ redis }) => monitorByKey(redis)));
  next = 0;
  const watched = await closedLoop({ inFlight: load.inFlight, total: monitored, maxMs: load.maxMs, run });
  const byKind = await Promise.all(monitors.map((monitor) => monitor.stop()));
  const per = Math.max(1, watched.n);
  const figures = shards.map((shard, i): ShardFigures => {
    const delta = calls(before[i] as Map<string, number>, after[i] as Map<string, number>);
    const idle = (idleRates[i] ?? 0) * (result.elapsedMs + 250);
    return {
      address: shard.address,
      commandsPerTask: (total(delta) - idle) / tasks,
      keys: keys[i] as KeyCounts,
      byKey: {
        owner: (byKind[i]?.owner ?? 0) / per,
        bullmq: (byKind[i]?.bullmq ?? 0) / per,
        other: (byKind[i]?.other ?? 0) / per,
        none: (byKind[i]?.none ?? 0) / per,
      },
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
    errors: result.errors + watched.errors,
    commandsPerTask: figures.reduce((sum, shard) => sum + shard.commandsPerTask, 0),
    completed: warm.n + result.n + watched.n,
    ...(target.executions !== undefined && { executions: executionCounts(target.executions()) }),
    shards: figures,
  };
}

function executionCounts(counts: Map<string, number>): { tasks: number; repeated: number } {
  return { tasks: counts.size, repeated: [...counts.values()].filter((count) => count > 1).length };
}

/** Largest deviation from the mean across shards, in % of the mean (0 for one shard). */
export function spreadPercent(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const mean = values.reduce((sum, v) => sum + v, 0) / values.length;
  if (mean === 0) return 0;
  return (Math.max(...values.map((v) => Math.abs(v - mean))) / mean) * 100;
}
