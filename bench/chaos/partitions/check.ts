/**
 * The partition run's checks over its history: each task's history against the task model (linearizability,
 * one task at a time), the anomalies named, and the invariants counted on their own — an acknowledged task never
 * later unknown, a terminal status never changed, the result what the tool returned, no task stuck, and no tool
 * run more often than its policy allows (executions counted from the workers' logs, by the faults the task lived
 * through).
 */
import type { Replication } from './config.js';
import type { FaultKind, FaultWindow } from './faults.js';
import type { Op, OpKind } from './history.js';
import { checkLinearizable } from './linearizability.js';
import { type AnomalyKind, anomaliesOf, splitByTask, taskModel } from './task-model.js';
import { ALLOWED_EXECUTIONS } from './tools.js';

/**
 * How an anomalous task counts: `violation` (a promise broken: fails the run) or `not promised` (asynchronous
 * replication; or with WAIT, a status change rolled back by a failover onto a replica that had not received it
 * yet — a worker's finish is not replicated before clients may read it).
 */
export type AnomalyClass = 'violation' | 'not promised';

/** The anomalies a failover's rollback of a status change explains (with WAIT, not promised). */
const ROLLBACK_KINDS: ReadonlySet<AnomalyKind> = new Set(['went backwards', 'terminal changed', 'cancelled twice']);

export interface TaskAnomaly {
  readonly taskId: string;
  readonly class: AnomalyClass;
  readonly tool: string | undefined;
  readonly kinds: AnomalyKind[];
  /** The faults under way while the task lived (from its create to its last operation). */
  readonly faults: FaultKind[];
  readonly ops: Op[];
}

export interface PartitionChecked {
  readonly operations: number;
  readonly byKind: Record<string, { ok: number; fail: number; info: number }>;
  readonly acknowledged: number;
  readonly linearizable: number;
  readonly notLinearizable: number;
  readonly undecided: number;
  /** Non-linearizable tasks by anomaly kind (a task may show several). */
  readonly anomalies: Record<string, number>;
  readonly anomalous: TaskAnomaly[];
  /** Anomalous tasks by class. */
  readonly classes: Record<AnomalyClass, number>;
  /** Acknowledged, then unknown to the final read. */
  readonly lost: number;
  /** Not terminal at the final read. */
  readonly stuck: number;
  /** Acknowledged as failed: their gateway could not queue their job for a reason other than Redis unavailable. */
  readonly unqueuedAcknowledged: number;
  readonly finalStatuses: Record<string, number>;
  /** Tasks that ran more often than their tool's policy allows, and the most runs of one task per tool. */
  readonly overRun: number;
  readonly overRunIds: string[];
  /** Of those, the tasks that lived through a failover (their finish may have been rolled back). */
  readonly overRunFailover: number;
  readonly maxRuns: Record<string, number>;
  /** Tasks that ran more than once, in all and by the fault kinds they lived through. */
  readonly rerun: number;
  readonly reruns: Record<string, number>;
  /** What the clients saw while each kind of fault was on: operations ok / refused / ambiguous. */
  readonly duringFaults: Record<string, { ok: number; fail: number; info: number }>;
}

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

const tally = (record: Record<string, { ok: number; fail: number; info: number }>, key: string, op: Op): void => {
  const row = record[key] ?? { ok: 0, fail: 0, info: 0 };
  row[op.outcome] += 1;
  record[key] = row;
};

/** Checks `ops` (the final reads included, as kind `final`) against the model and the invariants. */
export function checkPartitionHistory(
  ops: readonly Op[],
  executions: ReadonlyMap<string, number>,
  windows: readonly FaultWindow[],
  replication: Replication,
  unqueued: ReadonlySet<string>,
): PartitionChecked {
  const byKind: PartitionChecked['byKind'] = {};
  const duringFaults: PartitionChecked['duringFaults'] = {};
  for (const op of ops) {
    tally(byKind, op.kind, op);
    if (op.kind === 'final') continue;
    const window = windows.find((w) => op.invoke >= w.from && op.invoke <= w.to);
    tally(duringFaults, window?.kind ?? 'no fault', op);
  }
  const histories = splitByTask(ops);
  const opsOf = new Map<string, Op[]>();
  for (const op of ops) {
    const ids = op.kind === 'list' ? (op.seen ?? []).map((s) => s.taskId) : op.taskId ? [op.taskId] : [];
    for (const id of ids) {
      const mine = opsOf.get(id);
      if (mine === undefined) opsOf.set(id, [op]);
      else mine.push(op);
    }
  }
  /** The faults under way from a task's create to its last operation (`toFinal`: to the final read). */
  const windowsOf = (taskId: string, toFinal = false): FaultWindow[] => {
    const mine = opsOf.get(taskId) ?? [];
    const from = Math.min(...mine.map((op) => op.invoke));
    const to = Math.max(...mine.filter((op) => toFinal || op.kind !== 'final').map((op) => op.complete));
    return windows.filter((w) => w.from <= to && w.settled >= from);
  };
  const faultsOf = (taskId: string): FaultKind[] => [...new Set(windowsOf(taskId).map((w) => w.kind))];
  // A failover after a task's last operation can still roll back what it saw last: the final read shows it.
  const failedOver = (taskId: string): boolean => windowsOf(taskId, true).some((w) => w.failover === true);
  const classOf = (taskId: string, kinds: readonly AnomalyKind[]): AnomalyClass => {
    if (replication === 'async') return 'not promised';
    const rolledBack = kinds.every((kind) => ROLLBACK_KINDS.has(kind));
    return rolledBack && failedOver(taskId) ? 'not promised' : 'violation';
  };
  const classes: Record<AnomalyClass, number> = { violation: 0, 'not promised': 0 };
  let linearizable = 0;
  let undecided = 0;
  const anomalies: Record<string, number> = {};
  const anomalous: TaskAnomaly[] = [];
  for (const history of histories) {
    const verdict = checkLinearizable(taskModel(history.expect), history.ops, 200_000);
    if (verdict === 'linearizable') linearizable += 1;
    else if (verdict === 'not linearizable') {
      const kinds = anomaliesOf(history);
      for (const kind of kinds) anomalies[kind] = (anomalies[kind] ?? 0) + 1;
      const cls = classOf(history.taskId, kinds);
      classes[cls] += 1;
      anomalous.push({
        taskId: history.taskId,
        class: cls,
        tool: history.tool,
        kinds,
        faults: faultsOf(history.taskId),
        ops: opsOf.get(history.taskId) ?? [],
      });
    } else undecided += 1;
  }
  const finalStatuses: Record<string, number> = {};
  let lost = 0;
  let stuck = 0;
  for (const op of ops) {
    if (op.kind !== 'final') continue;
    const status = op.outcome === 'ok' ? (op.status ?? 'unreadable') : 'unreadable';
    finalStatuses[status] = (finalStatuses[status] ?? 0) + 1;
    if (status === 'unknown') lost += 1;
    else if (!TERMINAL.has(status)) stuck += 1;
  }
  const unqueuedAcknowledged = histories.filter((history) => unqueued.has(history.taskId)).length;
  const overRunIds: string[] = [];
  let overRunFailover = 0;
  let rerun = 0;
  const maxRuns: Record<string, number> = {};
  const reruns: Record<string, number> = {};
  for (const history of histories) {
    const runs = executions.get(history.taskId) ?? 0;
    const tool = history.tool ?? '?';
    maxRuns[tool] = Math.max(maxRuns[tool] ?? 0, runs);
    if (runs > (ALLOWED_EXECUTIONS[tool] ?? 1)) {
      overRunIds.push(history.taskId);
      if (failedOver(history.taskId)) overRunFailover += 1;
    }
    if (runs > 1) {
      rerun += 1;
      const during = faultsOf(history.taskId);
      for (const kind of during.length === 0 ? ['no fault'] : during) reruns[kind] = (reruns[kind] ?? 0) + 1;
    }
  }
  return {
    operations: ops.length,
    byKind,
    acknowledged: histories.length,
    linearizable,
    notLinearizable: anomalous.length,
    undecided,
    anomalies,
    anomalous,
    classes,
    lost,
    stuck,
    unqueuedAcknowledged,
    finalStatuses,
    overRun: overRunIds.length,
    overRunIds,
    overRunFailover,
    maxRuns,
    rerun,
    reruns,
    duringFaults,
  };
}

/** Operation kinds in the order the table lists them. */
export const OP_KINDS: readonly OpKind[] = ['create', 'get', 'list', 'cancel', 'result', 'update', 'final'];
