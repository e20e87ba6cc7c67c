/**
 * The task state machine as a sequential specification, and the split of a history into one history per task
 * (P-compositionality: a history is linearizable when each task's is). A task is absent until its create takes
 * effect, then `working`; the server alone moves it to `completed` or `failed` (never observed as such an
 * operation, so any read may find it moved on); only a cancel moves it to `cancelled`; a terminal status never
 * changes. `input_required` counts as `working`: the server moves a task both ways on its own (a tool asks, an
 * answer arrives, a tool run again after a crash asks again), and a `tasks/update` is acknowledged whatever the
 * task's state, so it only says the task exists. The model's state is the set of statuses the task may have (a
 * read narrows it), as a bit mask.
 */

import type { Op, SeenStatus } from './history.js';
import type { Model, TimedOp } from './linearizability.js';

const ABSENT = 1;
const WORKING = 2;
const COMPLETED = 4;
const FAILED = 8;
const CANCELLED = 16;
const BIT: Record<SeenStatus, number> = {
  unknown: ABSENT,
  working: WORKING,
  input_required: WORKING,
  completed: COMPLETED,
  failed: FAILED,
  cancelled: CANCELLED,
};

/** What one operation says of one task. */
export type TaskInput =
  | { readonly kind: 'create' }
  /** A read: tasks/get, a tasks/list entry, the status a refused cancel names, a terminal tasks/result. */
  | { readonly kind: 'read'; readonly status: SeenStatus }
  /**
   * A cancel that answered `cancelled` (the task was not terminal), one whose answer never came (`ambiguous`),
   * or one acknowledged whatever the task's state (`idempotent`, 2026-07-28): the task is terminal after it.
   */
  | { readonly kind: 'cancel'; readonly ambiguous: boolean; readonly idempotent?: boolean }
  /** A `tasks/update` acknowledged: the task exists. */
  | { readonly kind: 'update' }
  /** tasks/result of a completed task, with the text the tool returned. */
  | { readonly kind: 'result'; readonly text: string };

function each(mask: number, map: (bit: number) => number): number {
  let out = 0;
  for (let bit = 1; bit <= CANCELLED; bit <<= 1) if ((mask & bit) !== 0) out |= map(bit);
  return out;
}

/** The model of one task whose tool must return `expect` (undefined: any text). */
export function taskModel(expect: string | undefined): Model<number, TaskInput> {
  return {
    init: ABSENT,
    key: (mask) => String(mask),
    step(mask, input) {
      const next = each(mask, (bit) => {
        switch (input.kind) {
          case 'create':
            return bit === ABSENT ? WORKING : 0;
          case 'cancel':
            // An idempotent cancel may have come after the server finished the task: then it changed nothing.
            if (bit === WORKING && input.idempotent === true) return CANCELLED | COMPLETED | FAILED;
            if (bit === WORKING) return input.ambiguous ? WORKING | CANCELLED : CANCELLED;
            return input.ambiguous || (input.idempotent === true && bit !== ABSENT) ? bit : 0;
          case 'update':
            return bit === ABSENT ? 0 : bit;
          case 'result':
            if (expect !== undefined && input.text !== expect) return 0;
            return bit === WORKING || bit === COMPLETED ? COMPLETED : 0;
          case 'read': {
            const seen = BIT[input.status];
            if (seen === bit) return bit;
            // The server finishes a working task on its own; only a cancel makes it cancelled.
            return bit === WORKING && (seen === COMPLETED || seen === FAILED) ? seen : 0;
          }
        }
      });
      return next === 0 ? undefined : next;
    },
  };
}

/** One task's history: its create's expected result, and what each operation said of it. */
export interface TaskHistory {
  readonly taskId: string;
  readonly tool: string | undefined;
  readonly expect: string | undefined;
  readonly ops: TimedOp<TaskInput>[];
}

const TERMINAL = new Set<SeenStatus>(['completed', 'failed', 'cancelled']);

/** What an operation of the history says of `taskId` (undefined: nothing). */
function inputOf(op: Op, taskId: string): TaskInput | undefined {
  if (op.kind === 'list') {
    const entry = op.seen?.find((seen) => seen.taskId === taskId);
    return op.outcome === 'ok' && entry !== undefined ? { kind: 'read', status: entry.status } : undefined;
  }
  if (op.taskId !== taskId) return undefined;
  switch (op.kind) {
    case 'create':
      return op.outcome === 'ok' ? { kind: 'create' } : undefined;
    case 'cancel':
      if (op.outcome === 'info') return { kind: 'cancel', ambiguous: true };
      if (op.rev2026 === true && op.outcome === 'ok' && op.status === undefined) {
        return { kind: 'cancel', ambiguous: false, idempotent: true };
      }
      if (op.outcome !== 'ok' || op.status === undefined) return undefined;
      // A refused cancel names the terminal status it found: a read.
      return op.status === 'cancelled' && op.refused !== true
        ? { kind: 'cancel', ambiguous: false }
        : { kind: 'read', status: op.status };
    case 'result':
      if (op.outcome !== 'ok' || op.status === undefined) return undefined;
      if (op.status === 'completed' && op.text !== undefined) return { kind: 'result', text: op.text };
      return TERMINAL.has(op.status) || op.status === 'unknown' ? { kind: 'read', status: op.status } : undefined;
    case 'update':
      if (op.outcome !== 'ok') return undefined;
      return op.status === undefined ? { kind: 'update' } : { kind: 'read', status: op.status };
    default:
      if (op.outcome !== 'ok' || op.status === undefined) return undefined;
      // A 2026-07-28 get of a completed task inlines the result: checked as one.
      if (op.status === 'completed' && op.text !== undefined) return { kind: 'result', text: op.text };
      return { kind: 'read', status: op.status };
  }
}

/**
 * One history per acknowledged task (a task whose create answered with its id): every operation that said
 * something of it. Ambiguous operations complete at +∞; reads that saw nothing are left out (they constrain nothing).
 */
export function splitByTask(ops: readonly Op[]): TaskHistory[] {
  const byTask = new Map<string, { tool?: string; expect?: string; ops: TimedOp<TaskInput>[] }>();
  for (const op of ops) {
    if (op.kind === 'create' && op.outcome === 'ok' && op.taskId !== undefined) {
      byTask.set(op.taskId, { ...(op.tool && { tool: op.tool }), ...(op.expect && { expect: op.expect }), ops: [] });
    }
  }
  for (const op of ops) {
    const ids = op.kind === 'list' ? (op.seen ?? []).map((seen) => seen.taskId) : [op.taskId];
    for (const id of ids) {
      const task = id === undefined ? undefined : byTask.get(id);
      const input = task === undefined ? undefined : inputOf(op, id as string);
      if (task === undefined || input === undefined) continue;
      task.ops.push({ input, invoke: op.invoke, complete: op.outcome === 'info' ? Infinity : op.complete });
    }
  }
  return [...byTask].map(([taskId, task]) => ({ taskId, tool: task.tool, expect: task.expect, ops: task.ops }));
}

/** The kinds of anomaly a task's history shows, named from its operations (a non-linearizable one has ≥ 1). */
export type AnomalyKind = 'lost' | 'terminal changed' | 'went backwards' | 'cancelled twice' | 'wrong result' | 'other';

/** Names what is wrong with a history the checker refused; pairs are ordered by real time. */
export function anomaliesOf(history: TaskHistory): AnomalyKind[] {
  const kinds = new Set<AnomalyKind>();
  const done = history.ops.filter((op) => op.complete !== Infinity);
  const statusOf = (input: TaskInput): SeenStatus | undefined =>
    input.kind === 'read'
      ? input.status
      : input.kind === 'result'
        ? 'completed'
        : input.kind === 'cancel' && !input.ambiguous && input.idempotent !== true
          ? 'cancelled'
          : undefined;
  const create = done.find((op) => op.input.kind === 'create');
  const terminal = new Set<SeenStatus>();
  for (const op of done) {
    const status = statusOf(op.input);
    if (op.input.kind === 'result' && history.expect !== undefined && op.input.text !== history.expect) {
      kinds.add('wrong result');
    }
    if (status !== undefined && TERMINAL.has(status)) terminal.add(status);
    const earlier = done.filter((other) => other.complete < op.invoke).map((other) => statusOf(other.input));
    // Unknown once its create was answered, or once any answer had shown the task.
    const shown = earlier.some((seen) => seen !== undefined && seen !== 'unknown');
    if (status === 'unknown' && ((create !== undefined && op.invoke > create.complete) || shown)) kinds.add('lost');
    const live = status === 'working' || status === 'input_required';
    // Terminal before: a terminal status seen, or a cancel acknowledged whatever the state (2026-07-28).
    const ended =
      earlier.some((seen) => seen !== undefined && TERMINAL.has(seen)) ||
      done.some((other) => other.complete < op.invoke && other.input.kind === 'cancel' && other.input.idempotent);
    if (live && ended) kinds.add('went backwards');
    // A cancel acknowledged for a task already seen cancelled: the first cancel was undone in between.
    const cancelled = op.input.kind === 'cancel' && status === 'cancelled';
    if (cancelled && earlier.includes('cancelled')) kinds.add('cancelled twice');
  }
  const acknowledgedCancels = done.filter((op) => op.input.kind === 'cancel' && statusOf(op.input) === 'cancelled');
  if (acknowledgedCancels.length > 1) kinds.add('cancelled twice');
  if (terminal.size > 1) kinds.add('terminal changed');
  return kinds.size === 0 ? ['other'] : [...kinds];
}
