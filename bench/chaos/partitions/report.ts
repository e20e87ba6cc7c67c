import type { PartitionChecked } from './check.js';
import { OP_KINDS } from './check.js';
import type { Replication } from './config.js';
import { FAULT_KINDS, type FaultWindow } from './faults.js';
import { ALLOWED_EXECUTIONS } from './tools.js';

const list = (record: Record<string, number>): string =>
  Object.entries(record)
    .sort(([, a], [, b]) => b - a)
    .map(([key, value]) => `${value} × ${key}`)
    .join('; ') || '0';

const table = (head: readonly string[], rows: ReadonlyArray<readonly string[]>): string =>
  [
    `| ${head.join(' | ')} |`,
    `|${head.map(() => '---').join('|')}|`,
    ...rows.map((row) => `| ${row.join(' | ')} |`),
  ].join('\n');

/** The run's two tables (Markdown): the history and its checks, then what clients saw under each kind of fault. */
export function renderPartitionTables(checked: PartitionChecked, windows: readonly FaultWindow[]): string {
  const ops = OP_KINDS.filter((kind) => checked.byKind[kind] !== undefined).map((kind) => {
    const row = checked.byKind[kind] as { ok: number; fail: number; info: number };
    return `${kind} ${row.ok}/${row.fail}/${row.info}`;
  });
  const faults: Record<string, number> = {};
  for (const window of windows) faults[window.kind] = (faults[window.kind] ?? 0) + 1;
  const unsettled = windows.filter((window) => window.unsettled).length;
  const runs = Object.entries(checked.maxRuns)
    .map(([tool, max]) => `${tool} ${max} (policy ${ALLOWED_EXECUTIONS[tool] ?? 1})`)
    .join(', ');
  const summary = table(
    ['what', 'figure'],
    [
      ['operations (ok / refused / ambiguous)', `${checked.operations}: ${ops.join(', ')}`],
      ['tasks acknowledged', String(checked.acknowledged)],
      [
        'task histories linearizable / not / undecided',
        `${checked.linearizable} / **${checked.notLinearizable}** / ${checked.undecided}`,
      ],
      ['anomalies (tasks, by kind)', list(checked.anomalies)],
      [
        'anomalous tasks: **violations** / not promised',
        `**${checked.classes.violation}** / ${checked.classes['not promised']}`,
      ],
      ['**lost** (acknowledged, then unknown at the end)', `**${checked.lost}**`],
      ['**stuck** (not terminal at the end)', `**${checked.stuck}**`],
      ['acknowledged as failed: their job could not be queued', String(checked.unqueuedAcknowledged)],
      ['final statuses', list(checked.finalStatuses)],
      ['most runs of one task (policy)', runs || '–'],
      [
        'tasks run more often than the policy allows',
        `**${checked.overRun - checked.overRunFailover}** (+ ${checked.overRunFailover} across a failover)`,
      ],
      ['tasks run more than once, by fault lived through', `${checked.rerun}: ${list(checked.reruns)}`],
      ['faults (one at a time, each healed)', `${windows.length}: ${list(faults)}`],
      ['faults after which the deployment was not whole within 25 s', String(unsettled)],
    ],
  );
  const during = table(
    ['while', 'ok', 'refused', 'ambiguous'],
    ['no fault', ...FAULT_KINDS]
      .filter((kind) => checked.duringFaults[kind] !== undefined)
      .map((kind) => {
        const row = checked.duringFaults[kind] as { ok: number; fail: number; info: number };
        return [kind, String(row.ok), String(row.fail), String(row.info)];
      }),
  );
  return `${summary}\n\n${during}`;
}

/** Why the run failed its bar (empty: passed). With asynchronous replication anomalies are expected: reported only. */
export function partitionProblems(checked: PartitionChecked, replication: Replication): string[] {
  const problems: string[] = [];
  if (checked.acknowledged === 0) problems.push('no task was acknowledged');
  if (checked.undecided > 0) problems.push(`${checked.undecided} task histories undecided (search budget spent)`);
  // Asynchronous replication may lose a task's job and keep its record: stuck then, as not promised as lost.
  if (replication === 'async') return problems;
  if (checked.stuck > 0) problems.push(`${checked.stuck} tasks stuck`);
  if (checked.lost > 0) problems.push(`${checked.lost} acknowledged tasks lost`);
  const violations = checked.anomalous.filter((task) => task.class === 'violation');
  if (checked.classes.violation > 0) {
    const ids = violations.slice(0, 10).map((task) => `${task.taskId} (${task.kinds.join(', ')})`);
    problems.push(`${checked.classes.violation} task histories not linearizable: ${ids.join('; ')}`);
  }
  const overRun = checked.overRun - checked.overRunFailover;
  if (overRun > 0) problems.push(`${overRun} tasks ran more often than their tool's policy allows`);
  return problems;
}
