import type { ListResult } from '../workloads/list-pages.js';
import type { CostResult } from '../workloads/redis-cost.js';
import type { ShardsResult } from '../workloads/shards.js';
import type { WaitersResult } from '../workloads/waiters.js';
import type { LoadResult } from './stats.js';

/** Everything one run measured, by workload (absent when the workload did not run). */
export interface BenchResults {
  /** a with the official SDK client (taskgate, anchor) and BullMQ's own producer (bullmq). */
  a?: Record<string, LoadResult>;
  /** a with the lean load generator (taskgate, anchor, fastmcp), and raw BullMQ again in the same rounds. */
  aLean?: Record<string, LoadResult>;
  /** a's floor for the MCP servers: two `ping` requests through the same client, one in flight. */
  aFloor?: Record<string, LoadResult>;
  aLeanFloor?: Record<string, LoadResult>;
  b?: Record<string, Record<string, LoadResult>>;
  bLean?: Record<string, Record<string, LoadResult>>;
  c?: WaitersResult;
  /** Workload c again, from a session without a GET stream, on a fresh gateway (quiet streams). */
  cNoGet?: WaitersResult;
  d?: ListResult[];
  /** Redis cost per task: taskgate and FastMCP+Docket driven by the lean client, BullMQ by its producer. */
  e?: Record<string, CostResult>;
  /** The same task load on one redis-server and on a 3-master Redis Cluster (its own table). */
  f?: { single: ShardsResult; cluster: ShardsResult; sharded?: ShardsResult };
}

export type Verdict = 'PASS' | 'MISS';

/** The systems of the table, one column each. */
export const SYSTEMS = ['taskgate', 'bullmq', 'anchor', 'fastmcp'] as const;
export type SystemName = (typeof SYSTEMS)[number];

/** One line of the table. */
export interface Row {
  readonly metric: string;
  /** The client that measured it: `SDK`, `lean`, or blank (no MCP client, or several). */
  readonly client?: string;
  readonly taskgate?: number;
  readonly bullmq?: number;
  readonly anchor?: number;
  readonly fastmcp?: number;
  readonly target?: string;
  readonly verdict?: Verdict;
}

const judge = (ok: boolean): Verdict => (ok ? 'PASS' : 'MISS');
const sizeLabel = (n: number): string => (n >= 1e6 ? `${n / 1e6}M` : n >= 1000 ? `${n / 1000}k` : String(n));

/** One part of a target: its text, the system compared with, and the test (taskgate's figure, the other's). */
type Part = readonly [text: string, other: SystemName, ok: (taskgate: number, other: number) => boolean];

/** A target of one or more parts, each marked ✓/✗; PASS only when all hold, no verdict when a figure is missing. */
function judgeParts(
  values: Partial<Record<SystemName, number>>,
  parts: readonly Part[],
): Pick<Row, 'target' | 'verdict'> {
  const t = values.taskgate;
  if (t === undefined || parts.some(([, other]) => values[other] === undefined)) {
    return { target: parts.map(([text]) => text).join('; ') };
  }
  const oks = parts.map(([, other, ok]) => ok(t, values[other] as number));
  return {
    target: parts.map(([text], i) => `${text} ${oks[i] ? '✓' : '✗'}`).join('; '),
    verdict: judge(oks.every(Boolean)),
  };
}

const pick = (
  by: Partial<Record<SystemName, LoadResult | undefined>>,
  get: (r: LoadResult) => number | undefined,
): Partial<Record<SystemName, number>> => {
  const values: Partial<Record<SystemName, number>> = {};
  for (const name of SYSTEMS) {
    const result = by[name];
    const value = result === undefined ? undefined : get(result);
    if (value !== undefined) values[name] = value;
  }
  return values;
};

/** Targets of the load rows, by workload and client (`a` / `b50`, `lean` / `SDK`) and figure. */
type LoadTargets = Partial<Record<'throughput' | 'p50' | 'p99' | 'serverCpuMs', readonly Part[]>>;

/** The anchor's throughput counts only where its 1 s polls were under this share of its tasks. */
const ANCHOR_POLL_LIMIT = 0.01;
const AT_LEAST_ANCHOR: Part = ['≥ anchor', 'anchor', (t, a) => t >= a];
const CPU_OF_ANCHOR: Part = ['≤ 1.0× anchor (aim 0.8×)', 'anchor', (t, a) => t <= a];

const TARGETS: Record<'SDK' | 'lean', Record<string, LoadTargets>> = {
  lean: {
    a: {
      p50: [['≤ 3× BullMQ', 'bullmq', (t, b) => t <= 3 * b]],
      p99: [
        ['≥ 20× better than anchor', 'anchor', (t, a) => t * 20 <= a],
        ['≥ 20× better than FastMCP', 'fastmcp', (t, f) => t * 20 <= f],
      ],
    },
    '50': {
      throughput: [AT_LEAST_ANCHOR, ['≥ 10× FastMCP', 'fastmcp', (t, f) => t >= 10 * f]],
      serverCpuMs: [CPU_OF_ANCHOR],
    },
    '200': { throughput: [AT_LEAST_ANCHOR] },
  },
  SDK: {
    '50': { throughput: [AT_LEAST_ANCHOR], serverCpuMs: [CPU_OF_ANCHOR] },
    '200': { throughput: [AT_LEAST_ANCHOR] },
  },
};

/**
 * The throughput parts that count: a comparison with the anchor only when its 1 s polls stayed under 1 % of its
 * tasks (above that, its figure measures its poll interval, not its serving). The share is in the target's text.
 */
function countedThroughput(parts: readonly Part[], anchor: LoadResult | undefined): { parts: Part[]; note: string } {
  const share = anchor?.slowShare;
  if (share === undefined) return { parts: [...parts], note: '' };
  const polled = `anchor's 1 s polls: ${(share * 100).toFixed(1)} % of its tasks`;
  if (share < ANCHOR_POLL_LIMIT) return { parts: [...parts], note: ` (${polled})` };
  const kept = parts.filter(([, other]) => other !== 'anchor');
  return { parts: kept, note: `${kept.length > 0 ? '; ' : ''}≥ anchor not counted (${polled})` };
}

/**
 * The rows of one load level and client. `by` holds the systems that client drove; BullMQ (its own producer,
 * no MCP client) is shown beside both clients' rows for comparison.
 */
function loadRows(
  label: string,
  client: 'SDK' | 'lean',
  by: Partial<Record<SystemName, LoadResult | undefined>>,
  targets: LoadTargets,
  withThroughput: boolean,
): Row[] {
  const row = (metric: string, get: (r: LoadResult) => number | undefined, parts?: readonly Part[]): Row => {
    const values = pick(by, get);
    return { metric: `${label} ${metric}`, client, ...values, ...(parts !== undefined && judgeParts(values, parts)) };
  };
  const throughputRow = (): Row => {
    if (targets.throughput === undefined) return row('throughput (tasks/s)', (r) => r.throughput);
    const { parts, note } = countedThroughput(targets.throughput, by.anchor);
    const judged = row('throughput (tasks/s)', (r) => r.throughput, parts.length > 0 ? parts : undefined);
    return { ...judged, target: `${judged.target ?? ''}${note}` };
  };
  return [
    ...(withThroughput ? [throughputRow()] : []),
    row('create→result p50 (ms)', (r) => r.p50, targets.p50),
    row('create→result p99 (ms)', (r) => r.p99, targets.p99),
    row('CPU per task: servers, workers, Redis (ms)', (r) => r.serverCpuMs, targets.serverCpuMs),
    row('CPU per task: the client (ms)', (r) => r.clientCpuMs),
  ];
}

function floorRow(client: 'SDK' | 'lean', floor: Record<string, LoadResult>): Row {
  return {
    metric: 'a. … floor: 2 × MCP ping through the same client, p50 (ms)',
    client,
    ...pick(floor, (r) => r.p50),
    target: 'reference',
  };
}

/** Workload c's rows; `label` names a variant (its metrics begin `c. <label>:`), which leaves the floor out. */
function waiterRows(c: WaitersResult, label?: string): Row[] {
  const perHundred = c.idleCommandsPerSecond / (c.waiters / 100);
  const m = label === undefined ? 'c.' : `c. ${label}:`;
  const rows: Row[] = [
    {
      metric: `${m} ${c.waiters} blocked tasks/result: gateway RSS growth (MB)`,
      taskgate: c.rssGrowthMb,
      target: `≤ 1.5× the express floor (${(c.rssGrowthMb / c.floorRssGrowthMb).toFixed(2)}×)`,
      verdict: judge(c.rssGrowthMb <= 1.5 * c.floorRssGrowthMb),
    },
    {
      metric: `${m} Redis connections of that gateway process`,
      taskgate: c.redisConnections,
      target: '≤ 3',
      verdict: judge(c.redisConnections <= 3),
    },
    {
      metric: `${m} … floor: express alone holding ${c.waiters} SSE requests, RSS growth (MB)`,
      taskgate: c.floorRssGrowthMb,
      target: 'reference',
    },
    { metric: `${m} Redis commands per waiter while opening`, taskgate: c.commandsPerWaiter },
    { metric: `${m} ${c.waiters} idle waiters: gateway CPU (% of a core)`, taskgate: c.idleCpuShare * 100 },
    {
      metric: `${m} ${c.waiters} idle waiters: Redis commands per second`,
      taskgate: c.idleCommandsPerSecond,
      target: `≤ 1 per 100 waiters (${perHundred.toFixed(2)})`,
      verdict: judge(perHundred <= 1),
    },
    {
      metric: `${m} all ${c.waiters} woken: slowest, from its task's terminal write to its response (ms)`,
      taskgate: c.wakeMaxMs,
      target: '≤ 1000 ms',
      verdict: judge(c.wakeMaxMs <= 1000),
    },
    { metric: `${m} … median of the same (ms)`, taskgate: c.wakeP50Ms },
    { metric: `${m} … gateway CPU per woken waiter, finish to response (ms)`, taskgate: c.wakeCpuMsPerWaiter },
    { metric: `${m} … Redis commands per woken waiter, its finish included`, taskgate: c.wakeCommandsPerWaiter },
    {
      metric: `${m} … from the first of the ${c.waiters} finishes to the last result (ms)`,
      taskgate: c.wakeAllMs,
      target: `reference (finishing them took ${c.finishAllMs.toFixed(0)} ms)`,
    },
  ];
  return label === undefined ? rows : rows.filter((row) => !row.metric.includes('floor'));
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
        client: 'SDK',
        taskgate: list[page].p50,
        ...(list !== smallest && { target: `≤ 1.2× ${sizeLabel(smallest?.size ?? 0)} (${ratio.toFixed(2)}×)` }),
        ...(judged && { verdict: judge(ratio <= 1.2) }),
      };
    }),
  );
}

function costRows(e: Record<string, CostResult>): Row[] {
  const row = (metric: string, get: (cost: CostResult) => number, parts?: readonly Part[]): Row => {
    const values: Partial<Record<SystemName, number>> = {};
    for (const name of SYSTEMS) {
      const cost = e[name];
      if (cost !== undefined) values[name] = get(cost);
    }
    return { metric, client: 'lean', ...values, ...(parts !== undefined && judgeParts(values, parts)) };
  };
  return [
    row('e. Redis commands per task (commandstats, Lua-run included)', (c) => c.commandsPerTask, [
      ['≤ BullMQ + 20', 'bullmq', (t, b) => t <= b + 20],
    ]),
    row('e. … of which sent by clients (MONITOR)', (c) => c.topLevelPerTask),
    row('e. Redis memory kept per task (bytes)', (c) => c.memoryBytesPerTask, [
      ['≤ 2× BullMQ', 'bullmq', (t, b) => t <= 2 * b],
    ]),
    row('e. Redis network in + out per task (bytes)', (c) => c.netInBytesPerTask + c.netOutBytesPerTask),
  ];
}

/** The table's rows, with each target's verdict where the run measured every side. */
export function buildRows(results: BenchResults): Row[] {
  const rows: Row[] = [];
  const bullmqA = results.a?.bullmq;
  if (results.a !== undefined) rows.push(...loadRows('a. 1 in flight:', 'SDK', results.a, {}, false));
  if (results.aFloor !== undefined) rows.push(floorRow('SDK', results.aFloor));
  if (results.aLean !== undefined) {
    rows.push(
      ...loadRows(
        'a. 1 in flight:',
        'lean',
        { ...results.aLean, bullmq: results.aLean.bullmq ?? bullmqA },
        TARGETS.lean.a ?? {},
        false,
      ),
    );
  }
  if (results.aLeanFloor !== undefined) rows.push(floorRow('lean', results.aLeanFloor));
  for (const [inFlight, by] of Object.entries(results.b ?? {})) {
    rows.push(...loadRows(`b. ${inFlight} in flight:`, 'SDK', by, TARGETS.SDK[inFlight] ?? {}, true));
    const lean = results.bLean?.[inFlight];
    if (lean !== undefined) {
      rows.push(
        ...loadRows(
          `b. ${inFlight} in flight:`,
          'lean',
          { ...lean, bullmq: by.bullmq },
          TARGETS.lean[inFlight] ?? {},
          true,
        ),
      );
    }
  }
  if (results.c !== undefined) rows.push(...waiterRows(results.c));
  if (results.cNoGet !== undefined) rows.push(...waiterRows(results.cNoGet, 'no GET stream'));
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

/** The table as Markdown (it goes to the terminal and, as is, into docs/performance/latest-run.md). */
export function renderTable(rows: readonly Row[]): string {
  const header = [
    'metric',
    'client',
    'taskgate',
    'raw BullMQ',
    'anchor (SDK)',
    'FastMCP+Docket',
    'taskgate ÷ BullMQ',
    'taskgate ÷ anchor',
    'taskgate ÷ FastMCP',
    'target',
    'verdict',
  ];
  const lines = rows.map((row) => [
    row.metric,
    row.client ?? '',
    fmt(row.taskgate),
    fmt(row.bullmq),
    fmt(row.anchor),
    fmt(row.fastmcp),
    ratio(row.taskgate, row.bullmq),
    ratio(row.taskgate, row.anchor),
    ratio(row.taskgate, row.fastmcp),
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
  // f, sharded run: tasks executed more than once (the target is 0).
  'repeated',
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
  if (results.cNoGet !== undefined && results.cNoGet.delivered !== results.cNoGet.waiters) {
    problems.push(
      `c, no GET stream: only ${results.cNoGet.delivered} of ${results.cNoGet.waiters} waiters got their result`,
    );
  }
  return problems;
}
