/**
 * The before/after table of `bash scripts/bench --before REF`: an earlier commit's figures of workloads a and b
 * beside this checkout's, both measured in the same run, each with its ratio to the anchor.
 */
import type { BenchResults } from './report.js';
import type { LoadResult } from './stats.js';

/** The subject name of the earlier commit's taskgate in the results (`results.b.50.before`, …). */
export const BEFORE = 'before';

/** One line of the table. */
export interface BeforeRow {
  readonly metric: string;
  readonly client: 'SDK' | 'lean';
  readonly before?: number;
  readonly after?: number;
  readonly anchor?: number;
}

type Figure = 'p50' | 'throughput' | 'serverCpuMs';
const FIGURES: readonly (readonly [Figure, string])[] = [
  ['throughput', 'throughput (tasks/s)'],
  ['p50', 'create→result p50 (ms)'],
  ['serverCpuMs', 'CPU per task: servers, workers, Redis (ms)'],
];

function rowsOf(
  label: string,
  client: BeforeRow['client'],
  by: Record<string, LoadResult> | undefined,
  figures: readonly (readonly [Figure, string])[],
): BeforeRow[] {
  if (by?.[BEFORE] === undefined) return [];
  return figures.map(([figure, text]) => ({
    metric: `${label}: ${text}`,
    client,
    ...(by[BEFORE]?.[figure] !== undefined && { before: by[BEFORE][figure] }),
    ...(by.taskgate?.[figure] !== undefined && { after: by.taskgate[figure] }),
    ...(by.anchor?.[figure] !== undefined && { anchor: by.anchor[figure] }),
  }));
}

/** The rows: a's p50 and CPU, then b's throughput, p50 and CPU per load level, SDK client before lean. */
export function buildBeforeRows(results: BenchResults): BeforeRow[] {
  const a = FIGURES.filter(([figure]) => figure !== 'throughput');
  const rows = [
    ...rowsOf('a. 1 in flight', 'SDK', results.a, a),
    ...rowsOf('a. 1 in flight', 'lean', results.aLean, a),
  ];
  for (const level of Object.keys(results.b ?? {})) {
    rowsOf(`b. ${level} in flight`, 'SDK', results.b?.[level], FIGURES).forEach((row) => void rows.push(row));
    rowsOf(`b. ${level} in flight`, 'lean', results.bLean?.[level], FIGURES).forEach((row) => void rows.push(row));
  }
  return rows;
}

const fmt = (value: number | undefined): string =>
  value === undefined ? '–' : value >= 100 ? value.toFixed(1) : value.toFixed(2);
const ratio = (a: number | undefined, b: number | undefined): string =>
  a === undefined || b === undefined || b === 0 ? '–' : `${(a / b).toFixed(2)}×`;

/** A Markdown table; `before` and `after` name the two commits in its header. */
export function renderBeforeTable(rows: readonly BeforeRow[], before: string, after: string): string {
  const header = [
    'metric',
    'client',
    `before (${before})`,
    `after (${after})`,
    'after ÷ before',
    'before ÷ anchor',
    'after ÷ anchor',
  ];
  const lines = rows.map((row) => [
    row.metric,
    row.client,
    fmt(row.before),
    fmt(row.after),
    ratio(row.after, row.before),
    ratio(row.before, row.anchor),
    ratio(row.after, row.anchor),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  return [render(header), render(widths.map((w) => '-'.repeat(w))), ...lines.map(render)].join('\n');
}
