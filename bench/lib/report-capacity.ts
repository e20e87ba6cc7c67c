import type { BenchResults } from './report.js';
import type { LoadResult } from './stats.js';

/** One line of the capacity table: what one core (or one master) of a kind of process carries. */
export interface CapacityRow {
  readonly resource: string;
  /** Where the figure comes from in this run. */
  readonly from: string;
  /** The measured cost of one task (its unit in `from`). */
  readonly perTask: number;
  /** Tasks per second one core of it sustains (a Redis master: its one core). */
  readonly tasksPerSecond: number;
}

/** The lean client's load level of b with taskgate's highest throughput (the least idle time in the CPU figures). */
function busiestLevel(results: BenchResults): { inFlight: string; result: LoadResult } | undefined {
  let best: { inFlight: string; result: LoadResult } | undefined;
  for (const [inFlight, bySubject] of Object.entries(results.bLean ?? {})) {
    const result = bySubject.taskgate;
    if (result?.roleCpuMs !== undefined && (best === undefined || result.throughput > best.result.throughput)) {
      best = { inFlight, result };
    }
  }
  return best;
}

/**
 * The capacity table of one run: tasks per second per gateway core and per worker core (the 0 ms tool) from
 * the CPU time each kind of process spent per task in b's busiest lean level, and per Redis master from e's
 * commands per task and the rate the redis-server ran commands per second of its own CPU time. Empty without
 * b (lean, taskgate) and e.
 */
export function buildCapacityRows(results: BenchResults): CapacityRow[] {
  const level = busiestLevel(results);
  const cost = results.e?.taskgate;
  const rows: CapacityRow[] = [];
  if (level !== undefined) {
    const { inFlight, result } = level;
    const at = `b, lean client, ${inFlight} in flight, ${result.throughput.toFixed(0)} tasks/s`;
    for (const [role, resource] of [
      ['gateway', 'gateway process'],
      ['worker', 'worker process (0 ms tool)'],
      ['redis', 'redis-server (CPU per task)'],
    ] as const) {
      const ms = result.roleCpuMs?.[role];
      if (ms !== undefined && ms > 0) {
        rows.push({ resource, from: `CPU ms per task (${at})`, perTask: ms, tasksPerSecond: 1000 / ms });
      }
    }
  }
  if (cost?.commandsPerCpuSecond !== undefined && cost.commandsPerTask > 0) {
    rows.push({
      resource: 'Redis master (commands)',
      from: `commands per task (e), at ${cost.commandsPerCpuSecond.toFixed(0)} commands per Redis CPU second`,
      perTask: cost.commandsPerTask,
      tasksPerSecond: cost.commandsPerCpuSecond / cost.commandsPerTask,
    });
  }
  return rows;
}

/** Memory Redis keeps per million finished tasks (GB), from e; undefined without e. */
export function gbPerMillionTasks(results: BenchResults): number | undefined {
  const bytes = results.e?.taskgate?.memoryBytesPerTask;
  return bytes === undefined ? undefined : (bytes * 1e6) / 1024 ** 3;
}

/** The capacity table as Markdown, with the retained-memory line under it. */
export function renderCapacityTable(rows: readonly CapacityRow[], gbPerMillion?: number): string {
  const header = ['capacity', 'measured per task', 'from', 'tasks/s per core'];
  const lines = rows.map((row) => [
    row.resource,
    row.perTask.toFixed(row.perTask < 10 ? 3 : 1),
    row.from,
    row.tasksPerSecond.toFixed(0),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((cells) => (cells[i] ?? '').length)));
  const render = (cells: readonly string[]): string =>
    `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' | ')} |`;
  const table = [render(header), render(widths.map((w) => '-'.repeat(w))), ...lines.map(render)].join('\n');
  return gbPerMillion === undefined
    ? table
    : `${table}\n\nRedis memory per million retained (finished) tasks: ${gbPerMillion.toFixed(2)} GB (e)`;
}
