import type { ListResult } from '../workloads/list-pages.js';
import type { CostResult } from '../workloads/redis-cost.js';
import type { ShardsResult } from '../workloads/shards.js';
import type { WaitersResult } from '../workloads/waiters.js';
import type { LoadResult } from './stats.js';

/** Everything one run measured, by workload (absent when the workload did not run). */
export interface BenchResults {
  a?: Record<string, LoadResult>;
  /** a's floor for the MCP servers: two `ping` requests through the same client, one in flight. */
  aFloor?: Record<string, LoadResult>;
  b?: Record<string, Record<string, LoadResult>>;
  c?: WaitersResult;
  d?: ListResult[];
  e?: Record<string, CostResult>;
  /** The same task load on one redis-server and on a 3-master Redis Cluster (its own table). */
  f?: { single: ShardsResult; cluster: ShardsResult };
}

export type Verdict = 'PASS' | 'MISS';

/** One line of the table. */
export interface Row {
  readonly metric: string;
  readonly taskgate?: number;
  readonly bullmq?: number;
  readonly anchor?: number;
  readonly target?: string;
  readonly verdict?: Verdict;
}

const judge = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');
const sizeLabel = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1000 ? `${n / 1000}k` : String(n));

type Side = readonly [text: string, ok: (taskgate: number, other: number) => boolean];

/** A two-part target (against BullMQ and against the anchor): each part marked ✓/✗, PASS only when both hold. */
function bothSides(
  t: number | undefined,
  b: number | undefined,
  a: number | undefined,
  floor: Side,
  anchor: Side,
): Pick<Row, 'target' | 'verdict'> {
  if (t === undefined || b === undefined || a === undefined) return { target: `${floor[0]}; ${anchor[0]}` };
  const [okFloor, okAnchor] = [floor[1](t, b), anchor[1](t, a)];
  const mark = (ok: boolean): string => (ok ? '✓' : '✗');
  return {
    target: `${floor[0]} ${mark(okFloor)}; ${anchor[0]} ${mark(okAnchor)}`,
    verdict: judge(okFloor && okAnchor),
  };
}

function loadRows(label: string, by: Record<string, LoadResult>, targets: boolean): Row[] {
  const [tg, bq, an] = [by.taskgate, by.bullmq, by.anchor];
  const rows: Row[] = [];
  const latency = (name: 'p50' | 'p99'): Row => {
    const [t, b, a] = [tg?.[name], bq?.[name], an?.[name]];
    const judged =
      targets && label.startsWith('a')
        ? bothSides(t, b, a, ['≤ 2× BullMQ', (x, y) => x <= 2 * y], ['≥ 50× faster than anchor', (x, z) => x * 50 <= z])
        : {};
    return {
      metric: `${label} create→result ${name} (ms)`,
      ...(t !== undefined && { taskgate: t }),
      ...(b !== undefined && { bullmq: b }),
      ...(a !== undefined && { anchor: a }),
      ...judged,
    };
  };
  if (!label.startsWith('a')) {
    const [t, b, a] = [tg?.throughput, bq?.throughput, an?.throughput];
    const judged = targets
      ? bothSides(t, b, a, ['≥ 70 % of BullMQ', (x, y) => x >= 0.7 * y], ['≥ 5× anchor', (x, z) => x >= 5 * z])
      : {};
    rows.push({
      metric: `${label} throughput (tasks/s)`,
      ...(t !== undefined && { taskgate: t }),
      ...(b !== undefined && { bullmq: b }),
      ...(a !== undefined && { anchor: a }),
      ...judged,
    });
  }
  rows.push(latency('p50'), latency('p99'));
  if (targets) {
    const cpu = (metric: string, pick: (r: LoadResult) => number | undefined): Row => {
      const [t, b, a] = [tg && pick(tg), bq && pick(bq), an && pick(an)];
      return {
        metric: `${label} ${metric}`,
        ...(t !== undefined && { taskgate: t }),
        ...(b !== undefined && { bullmq: b }),
        ...(a !== undefined && { anchor: a }),
      };
    };
    rows.push(
      cpu('CPU per task: servers, workers, Redis (ms)', (r) => r.serverCpuMs),
      cpu('CPU per task: the client (ms)', (r) => r.clientCpuMs),
    );
  }
  return rows;
}

function floorRow(floor: Record<string, LoadResult>): Row {
  const [t, a] = [floor.taskgate?.p50, floor.anchor?.p50];
  return {
    metric: 'a. … floor: 2 × MCP ping through the same client, p50 (ms)',
    ...(t !== undefined && { taskgate: t }),
    ...(a !== undefined && { anchor: a }),
    target: 'reference',
  };
}

function waiterRows(c: WaitersResult): Row[] {
  return [
    {
      metric: `c. ${c.waiters} blocked tasks/result: gateway RSS growth (MB)`,
      taskgate: c.rssGrowthMb,
      target: '≤ 100 MB',
      verdict: judge(c.rssGrowthMb <= 100),
    },
    {
      metric: 'c. Redis connections of that gateway process',
      taskgate: c.redisConnections,
      target: '≤ 3',
      verdict: judge(c.redisConnections <= 3),
    },
    {
      metric: `c. … floor: express alone holding ${c.waiters} SSE requests, RSS growth (MB)`,
      taskgate: c.floorRssGrowthMb,
      target: 'reference',
    },
    { metric: 'c. Redis commands per waiter while opening', taskgate: c.commandsPerWaiter },
    { metric: `c. ${c.waiters} idle waiters: gateway CPU (% of a core)`, taskgate: c.idleCpuShare * 100 },
    { metric: `c. ${c.waiters} idle waiters: Redis commands per second`, taskgate: c.idleCommandsPerSecond },
    { metric: `c. all ${c.waiters} woken: last result after (ms)`, taskgate: c.wakeAllMs },
  ];
}

function listRows(d: readonly ListResult[]): Row[] {
  const smallest = d[0];
  return d.flatMap((list) =>
    (['firstPage', 'deepPage'] as const).map((page): Row => {
      const base = smallest?.[page].p50 ?? Number.NaN;
      const ratio = list[page].p50 / base;
      const judged = list !== smallest && list.size >= 1e6;
      return {
        metric: `d. tasks/list ${page === 'firstPage' ? 'first' : 'deep (90 %)'} page p50, ${sizeLabel(list.size)} tasks (ms)`,
        taskgate: list[page].p50,
        ...(list !== smallest && { target: `≤ 2× ${sizeLabel(smallest?.size ?? 0)} (${ratio.toFixed(2)}×)` }),
        ...(judged && { verdict: judge(ratio <= 2) }),
      };
    }),
  );
}

function costRows(e: Record<string, CostResult>): Row[] {
  const [tg, bq] = [e.taskgate, e.bullmq];
  const row = (metric: string, pick: (cost: CostResult) => number, extra: Partial<Row> = {}): Row => ({
    metric,
    ...(tg !== undefined && { taskgate: pick(tg) }),
    ...(bq !== undefined && { bullmq: pick(bq) }),
    ...extra,
  });
  const commands =
    tg !== undefined && bq !== undefined
      ? { target: '≤ BullMQ + 15', verdict: judge(tg.commandsPerTask <= bq.commandsPerTask + 15) }
      : {};
  return [
    row('e. Redis commands per task (commandstats, Lua-run included)', (c) => c.commandsPerTask, commands),
    row('e. … of which sent by clients (MONITOR)', (c) => c.topLevelPerTask),
    row('e. Redis memory kept per task (bytes)', (c) => c.memoryBytesPerTask),
    row('e. Redis network in + out per task (bytes)', (c) => c.netInBytesPerTask + c.netOutBytesPerTask),
  ];
}

/** The table's rows, with each target's verdict where the run measured both sides. */
export function buildRows(results: BenchResults): Row[] {
  const rows: Row[] = [];
  if (results.a !== undefined) rows.push(...loadRows('a. 1 in flight:', results.a, true));
  if (results.aFloor !== undefined) rows.push(floorRow(results.aFloor));
  for (const [inFlight, by] of Object.entries(results.b ?? {})) {
    rows.push(...loadRows(`b. ${inFlight} in flight:`, by, inFlight === '50'));
  }
  if (results.c !== undefined) rows.push(...waiterRows(results.c));
  if (results.d !== undefined) rows.push(...listRows(results.d));
  if (results.e !== undefined) rows.push(...costRows(results.e));
  return rows;
}

function fmt(value: number | undefined): string {
  if (value === undefined) return '–';
  if (!Number.isFinite(value)) return String(value);
  const abs = Math.abs(value);
  return abs >= 1000 ? value.toFixed(0) : abs >= 100 ? value.toFixed(1) : value.toFixed(2);
}

function ratio(a: number | undefined, b: number | undefined): string {
  return a === undefined || b === undefined ? '–' : `${(a / b).toFixed(2)}×`;
}

/** The table as Markdown (it goes to the terminal and, as is, into the README). */
export function renderTable(rows: readonly Row[]): string {
  const header = [
    'metric',
    'taskgate',
    'raw BullMQ',
    'anchor (SDK)',
    'taskgate ÷ BullMQ',
    'taskgate ÷ anchor',
    'target',
    'verdict',
  ];
  const lines = rows.map((row) => [
    row.metric,
    fmt(row.taskgate),
    fmt(row.bullmq),
    fmt(row.anchor),
    ratio(row.taskgate, row.bullmq),
    ratio(row.taskgate, row.anchor),
    row.target ?? '',
    row.verdict ?? '',
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [render(header), render(widths.map((w) => '-'.repeat(w))), ...lines.map(render)].join('\n');
}

/** Figures that may be zero or negative (a difference, a count of failures, a share); all others must be > 0. */
const MAY_BE_NON_POSITIVE = new Set([
  'rssGrowthMb',
  'perWaiterKb',
  'floorRssGrowthMb',
  'errors',
  'slowShare',
  'idleCommandsPerSecond',
  // f: a shard may hold (and its commands name) none of BullMQ's or the process-wide keys.
  'bullmq',
  'other',
  'none',
]);

/** Everything wrong with the figures: missing, not finite, not positive, failed operations, lost waiters. */
export function sanityProblems(results: BenchResults, ran: ReadonlySet<string>): string[] {
  const problems: string[] = [];
  for (const id of ran) {
    if (results[id as keyof BenchResults] === undefined) problems.push(`workload ${id} produced no figures`);
  }
  const walk = (value: unknown, path: string): void => {
    if (typeof value === 'number') {
      const key = path.split('.').at(-1) ?? '';
      if (!Number.isFinite(value)) problems.push(`${path} is ${value}`);
      else if (!MAY_BE_NON_POSITIVE.has(key) && value <= 0) problems.push(`${path} is ${value}, expected > 0`);
      if (key === 'errors' && value > 0) problems.push(`${path}: ${value} operations failed`);
    } else if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) walk(item, `${path}[${i}]`);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, item] of Object.entries(value)) walk(item, path === '' ? key : `${path}.${key}`);
    }
  };
  walk(results, '');
  if (results.c !== undefined && results.c.delivered !== results.c.waiters) {
    problems.push(`c: only ${results.c.delivered} of ${results.c.waiters} waiters got their result`);
  }
  return problems;
}
