import type { Checked } from './checks.js';
import type { FaultLog } from './faults.js';

const ms = (value: number): string => (Number.isNaN(value) ? '–' : `${Math.round(value)} ms`);
const list = (record: Record<string, number>): string =>
  Object.entries(record)
    .sort(([, a], [, b]) => b - a)
    .map(([key, value]) => `${value} × ${key}`)
    .join('; ');

/** The chaos run's one table (Markdown): what the clients got, what the server says, what the faults were. */
export function renderChaosTable(
  checked: Checked,
  faults: FaultLog,
  extra: {
    unacknowledged: string;
    retries: number;
    getOpened: number;
    getResumed: number;
    exits: { atStart: number; unasked: number };
  },
): string {
  const failedTotal = Object.values(checked.failed).reduce((sum, n) => sum + n, 0);
  const stuckTotal = Object.values(checked.stuck).reduce((sum, n) => sum + n, 0);
  const toxicsTotal = Object.values(faults.toxics).reduce((sum, n) => sum + n, 0);
  const { warmup, faults: during } = checked.latency;
  const rows: Array<[string, string]> = [
    ['tasks acknowledged', `${checked.acknowledged} (${list(checked.byKind)})`],
    ['completed', String(checked.completed)],
    ['failed', failedTotal === 0 ? '0' : `${failedTotal}: ${list(checked.failed)}`],
    ['cancelled', String(checked.cancelled)],
    ['**stuck** (not terminal at the check)', stuckTotal === 0 ? '**0**' : `**${stuckTotal}**: ${list(checked.stuck)}`],
    ['**lost** (acknowledged, then unknown)', `**${checked.lost}**`],
    ['tasks/get unreadable', String(checked.unreadable)],
    [
      'executions per task',
      `${checked.executions.once} once, ${checked.executions.more} more than once (max ${checked.executions.max}), ${checked.executions.never} never (${checked.completedWithoutExecution} of them completed)`,
    ],
    [
      'progress events (completed progress tasks)',
      `${checked.events.expected} expected over ${checked.events.tasks} tasks: ${checked.events.lost} lost, ${checked.events.duplicated} duplicated`,
    ],
    ['results never received (task ended)', String(checked.resultsMissing)],
    ['result streams resumed (Last-Event-ID) / opened again', `${checked.resumes} / ${checked.restarts}`],
    ['session GET streams opened / resumed (Last-Event-ID)', `${extra.getOpened} / ${extra.getResumed}`],
    ['create → result without faults', `p50 ${ms(warmup.p50)}, p99 ${ms(warmup.p99)} (n=${warmup.n})`],
    ['create → result during faults', `p50 ${ms(during.p50)}, p99 ${ms(during.p99)} (n=${during.n})`],
    [
      'kills (kill -9, restarted)',
      `${faults.kills.gateway + faults.kills.worker} (${faults.kills.gateway} gateway, ${faults.kills.worker} worker)`,
    ],
    ['processes that exited at start / unasked (started again)', `${extra.exits.atStart} / ${extra.exits.unasked}`],
    ['rolling restarts (SIGTERM of every gateway)', String(faults.rollingRestarts)],
    ['Redis restarts (SIGKILL, AOF fsync always)', String(faults.redisRestarts)],
    ['toxics on the Redis link', toxicsTotal === 0 ? '0' : `${toxicsTotal} (${list(faults.toxics)})`],
    ['client retries / tools/call given up', `${extra.retries} / ${extra.unacknowledged}`],
  ];
  const width = Math.max(...rows.map(([name]) => name.length));
  return [
    `| ${'what'.padEnd(width)} | figure |`,
    `|${'-'.repeat(width + 2)}|--------|`,
    ...rows.map(([name, value]) => `| ${name.padEnd(width)} | ${value} |`),
  ].join('\n');
}

/** Why the run failed its bar (empty: it passed): stuck, lost or unreadable tasks, events lost or duplicated. */
export function chaosProblems(checked: Checked): string[] {
  const problems: string[] = [];
  const stuck = Object.values(checked.stuck).reduce((sum, n) => sum + n, 0);
  if (checked.acknowledged === 0) problems.push('no task was acknowledged');
  if (stuck > 0) problems.push(`${stuck} stuck: ${checked.stuckIds.slice(0, 10).join(', ')}`);
  if (checked.lost > 0) problems.push(`${checked.lost} lost: ${checked.lostIds.slice(0, 10).join(', ')}`);
  if (checked.unreadable > 0) problems.push(`${checked.unreadable} tasks/get unreadable`);
  if (checked.events.lost > 0) problems.push(`${checked.events.lost} progress events lost`);
  if (checked.resultsMissing > 0) problems.push(`${checked.resultsMissing} results never received`);
  if (checked.events.duplicated > 0) problems.push(`${checked.events.duplicated} progress events duplicated`);
  return problems;
}
