import {
  type CommandsByKey,
  type KeyCounts,
  type ShardFigures,
  type ShardsResult,
  spreadPercent,
} from '../workloads/shards.js';
import type { Verdict } from './report.js';

/** The most of the cluster's commands one master may run when one tool spreads over 3 queue shards (%). */
export const BUSIEST_SHARE_TARGET_PERCENT = 40;

/** The largest deviation from the mean across shards that the per-owner keys may show (%). */
export const SPREAD_TARGET_PERCENT = 20;

/** One line of workload f's table: the single node, the cluster in all, and each of its masters. */
export interface ShardRow {
  readonly metric: string;
  readonly single?: number;
  readonly cluster?: number;
  readonly perShard?: readonly number[];
  readonly target?: string;
  readonly verdict?: Verdict;
}

const sum = (values: readonly number[]): number => values.reduce((total, v) => total + v, 0);

/** The rows of workload f, from the single-node and the cluster run. */
export function buildShardRows(single: ShardsResult, cluster: ShardsResult, sharded?: ShardsResult): ShardRow[] {
  const shards = cluster.shards;
  const keyRow = (metric: string, pick: (keys: KeyCounts) => number, extra: Partial<ShardRow> = {}): ShardRow => ({
    metric,
    single: sum(single.shards.map((shard) => pick(shard.keys))),
    cluster: sum(shards.map((shard) => pick(shard.keys))),
    perShard: shards.map((shard) => pick(shard.keys)),
    ...extra,
  });
  const byKeyRow = (metric: string, pick: (by: CommandsByKey) => number): ShardRow => ({
    metric,
    single: sum(single.shards.map((shard) => pick(shard.byKey))),
    cluster: sum(shards.map((shard) => pick(shard.byKey))),
    perShard: shards.map((shard) => pick(shard.byKey)),
  });
  const ownerSpread = spreadPercent(shards.map((shard) => shard.keys.owner));
  const allSpread = spreadPercent(shards.map((shard) => shard.keys.all));
  const commandShare = (shard: ShardFigures): number => (shard.commandsPerTask / cluster.commandsPerTask) * 100;
  return [...baseRows(), ...(sharded === undefined ? [] : shardedRows(cluster, sharded))];

  function baseRows(): ShardRow[] {
    return [
      {
        metric: `f. throughput, ${cluster.inFlight} in flight over ${cluster.owners} owners (tasks/s)`,
        single: single.throughput,
        cluster: cluster.throughput,
      },
      { metric: 'f. create→result p50 (ms)', single: single.p50, cluster: cluster.p50 },
      { metric: 'f. create→result p99 (ms)', single: single.p99, cluster: cluster.p99 },
      {
        metric: 'f. Redis commands per task (commandstats on each master, Lua-run included)',
        single: single.commandsPerTask,
        cluster: cluster.commandsPerTask,
        perShard: shards.map((shard) => shard.commandsPerTask),
      },
      {
        metric: "f. … share of the cluster's commands per shard (%)",
        perShard: shards.map(commandShare),
        target: `reference: spread ${spreadPercent(shards.map(commandShare)).toFixed(1)} %`,
      },
      byKeyRow('f. … on per-owner keys (MONITOR pass)', (by) => by.owner),
      byKeyRow("f. … on BullMQ's keys (MONITOR pass)", (by) => by.bullmq),
      byKeyRow('f. … on other keys: catalog, rate limits (MONITOR pass)', (by) => by.other),
      byKeyRow('f. … naming no key: MULTI, EXEC, TIME, … (MONITOR pass)', (by) => by.none),
      keyRow('f. keys after the run (DBSIZE)', (keys) => keys.all, {
        target: `reference: spread ${allSpread.toFixed(1)} %`,
      }),
      keyRow("f. … taskgate's per-owner keys (tg:{owner tag}:…)", (keys) => keys.owner, {
        target: `spread ≤ ±${SPREAD_TARGET_PERCENT} % (${ownerSpread.toFixed(1)} %)`,
        verdict: ownerSpread <= SPREAD_TARGET_PERCENT ? 'PASS' : 'MISS',
      }),
      keyRow('f. … of which session records (one per owner)', (keys) => keys.sessions),
      keyRow('f. … BullMQ keys (tg:bull:{queue}:…, one slot per queue)', (keys) => keys.bullmq),
      keyRow('f. … other keys (tg:{catalog}:…, tg:rl:…)', (keys) => keys.other),
    ];
  }
}

/** The busiest master's share of the cluster's commands (%), and every master's. */
function shares(result: ShardsResult): number[] {
  return result.shards.map((shard) => (shard.commandsPerTask / result.commandsPerTask) * 100);
}

/**
 * f, third run: the one tool over queue shards on the same cluster. Its per-shard columns are this run's
 * masters (the same ports' order as the cluster run's is not guaranteed: each run starts its own cluster).
 */
function shardedRows(cluster: ShardsResult, sharded: ShardsResult): ShardRow[] {
  const busiest = Math.max(...shares(sharded));
  const executed = sharded.executions;
  const once = executed !== undefined && executed.repeated === 0 && executed.tasks === sharded.completed;
  return [
    {
      metric: `f. ${sharded.topology}: throughput (tasks/s)`,
      single: sharded.throughput,
      cluster: sharded.throughput,
    },
    {
      metric: "f. … busiest master's share of the cluster's commands (%), without shards in the cluster column",
      cluster: busiest,
      single: Math.max(...shares(cluster)),
      perShard: shares(sharded),
      target: `≤ ${BUSIEST_SHARE_TARGET_PERCENT} % with shards (${busiest.toFixed(1)} %)`,
      verdict: busiest <= BUSIEST_SHARE_TARGET_PERCENT ? 'PASS' : 'MISS',
    },
    {
      metric: '… Redis commands per task with shards (all masters)',
      cluster: sharded.commandsPerTask,
      perShard: sharded.shards.map((shard) => shard.commandsPerTask),
    },
    {
      metric: '… BullMQ keys per master with shards',
      cluster: sum(sharded.shards.map((shard) => shard.keys.bullmq)),
      perShard: sharded.shards.map((shard) => shard.keys.bullmq),
    },
    {
      metric: '… every task executed once (tasks completed)',
      cluster: sharded.completed,
      target: `${executed?.tasks ?? '?'} executed for ${sharded.completed} completed, ${executed?.repeated ?? '?'} twice or more`,
      verdict: once && sharded.errors === 0 ? 'PASS' : 'MISS',
    },
  ];
}

function fmt(value: number | undefined): string {
  if (value === undefined) return '–';
  if (!Number.isFinite(value) || Number.isInteger(value)) return String(value);
  const abs = Math.abs(value);
  return abs >= 1000 ? value.toFixed(0) : abs >= 100 ? value.toFixed(1) : value.toFixed(2);
}

/** Workload f's table as Markdown: a column per master of the cluster. */
export function renderShardTable(rows: readonly ShardRow[], cluster: ShardsResult): string {
  const shardHeads = cluster.shards.map((shard, i) => `shard ${i + 1} (${shard.address})`);
  const header = ['metric', 'single node', cluster.topology, ...shardHeads, 'cluster ÷ single', 'target', 'verdict'];
  const lines = rows.map((row) => [
    row.metric,
    fmt(row.single),
    fmt(row.cluster),
    ...shardHeads.map((_, i) => fmt(row.perShard?.[i])),
    row.single === undefined || row.cluster === undefined ? '–' : `${(row.cluster / row.single).toFixed(2)}×`,
    row.target ?? '',
    row.verdict ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [render(header), render(widths.map((w) => '-'.repeat(w))), ...lines.map(render)].join('\n');
}
