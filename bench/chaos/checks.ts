/**
 * The end of a chaos run: every acknowledged task read back with `tasks/get` through the load balancer, the
 * executions each tool recorded in the worker logs, and the progress numbers each client received.
 */
import { readFileSync } from 'node:fs';
import { PROGRESS_STEPS, type TaskKind, type TaskRecord } from './load.js';
import { postWithRetry } from './rpc.js';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

/** What `tasks/get` said of one task at the end. */
export interface FinalState {
  readonly status: string;
  readonly statusMessage?: string;
}

export interface Checked {
  readonly acknowledged: number;
  readonly byKind: Record<string, number>;
  readonly completed: number;
  /** Failed tasks by status message. */
  readonly failed: Record<string, number>;
  readonly cancelled: number;
  /** Not terminal at the check, by status. */
  readonly stuck: Record<string, number>;
  /** Acknowledged, then unknown to tasks/get (-32602), and the ids. */
  readonly lost: number;
  readonly lostIds: string[];
  readonly stuckIds: string[];
  /** tasks/get failing even after retries (no answer the run could read). */
  readonly unreadable: number;
  /** Executions per task: how many tasks ran 0, 1, more than once. */
  readonly executions: { readonly never: number; readonly once: number; readonly more: number; readonly max: number };
  /** Tasks that completed but never started (0 executions recorded): should not exist. */
  readonly completedWithoutExecution: number;
  /** Progress numbers over completed progress tasks the client followed to their result. */
  readonly events: {
    readonly tasks: number;
    readonly expected: number;
    readonly lost: number;
    readonly duplicated: number;
  };
  /** Clients that never got a `tasks/result` response for a task that completed or failed. */
  readonly resultsMissing: number;
  /** The tasks whose result never came (at most 50). */
  readonly missingIds: string[];
  readonly resumes: number;
  readonly restarts: number;
  /** create → result, ms, by phase. */
  readonly latency: Record<'warmup' | 'faults', { n: number; p50: number; p99: number }>;
}

/** Counts `{"chaosExecution":"<taskId>"}` lines per task over the given worker logs. */
export function executionsByTask(logFiles: readonly string[]): Map<string, number> {
  const counts = new Map<string, number>();
  for (const file of logFiles) {
    for (const match of readFileSync(file, 'utf8').matchAll(/"chaosExecution":"([^"]+)"/g)) {
      const id = match[1] as string;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
  }
  return counts;
}

/** tasks/get of every task, `parallel` at a time; a task unknown to the server reads as status `lost`. */
export async function finalStates(
  url: string,
  tasks: readonly TaskRecord[],
  until: number,
  parallel = 16,
): Promise<Map<string, FinalState>> {
  const states = new Map<string, FinalState>();
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let i = next++; i < tasks.length; i = next++) {
      const task = tasks[i] as TaskRecord;
      const answer = await postWithRetry(
        url,
        task.sessionId,
        { jsonrpc: '2.0', id: i, method: 'tasks/get', params: { taskId: task.taskId } },
        { until, timeoutMs: 10_000, onRetry: () => {} },
      );
      const message = answer.messages[0];
      if (message?.error?.code === -32602)
        states.set(task.taskId, { status: 'lost', statusMessage: message.error.message });
      else if (typeof message?.result?.status === 'string') {
        const statusMessage = message.result.statusMessage;
        states.set(task.taskId, {
          status: message.result.status,
          ...(typeof statusMessage === 'string' && { statusMessage }),
        });
      } else {
        const why = message?.error !== undefined ? `error ${message.error.code}` : `HTTP ${answer.status}`;
        states.set(task.taskId, { status: 'unreadable', statusMessage: why });
      }
    }
  };
  await Promise.all(Array.from({ length: parallel }, lane));
  return states;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

/** Groups a status message: ids and numbers replaced, so messages of one cause count together. */
export const reasonOf = (message: string | undefined): string =>
  (message ?? '(no status message)').replace(/[0-9a-f]{16,}/gi, '<id>').replace(/\d+/g, 'N');

export function check(
  tasks: readonly TaskRecord[],
  states: ReadonlyMap<string, FinalState>,
  executions: ReadonlyMap<string, number>,
): Checked {
  const byKind: Record<string, number> = {};
  const failed: Record<string, number> = {};
  const stuck: Record<string, number> = {};
  const lostIds: string[] = [];
  const stuckIds: string[] = [];
  let completed = 0;
  let cancelled = 0;
  let unreadable = 0;
  const exec = { never: 0, once: 0, more: 0, max: 0 };
  let completedWithoutExecution = 0;
  const events = { tasks: 0, expected: 0, lost: 0, duplicated: 0 };
  let resultsMissing = 0;
  const missingIds: string[] = [];
  const latencies: Record<'warmup' | 'faults', number[]> = { warmup: [], faults: [] };
  for (const task of tasks) {
    byKind[task.kind] = (byKind[task.kind] ?? 0) + 1;
    const state = states.get(task.taskId) ?? { status: 'unreadable' };
    const runs = executions.get(task.taskId) ?? 0;
    if (runs === 0) exec.never += 1;
    else if (runs === 1) exec.once += 1;
    else exec.more += 1;
    exec.max = Math.max(exec.max, runs);
    if (state.status === 'completed') {
      completed += 1;
      if (runs === 0) completedWithoutExecution += 1;
    } else if (state.status === 'failed') {
      const reason = reasonOf(state.statusMessage);
      failed[reason] = (failed[reason] ?? 0) + 1;
    } else if (state.status === 'cancelled') cancelled += 1;
    else if (state.status === 'lost') lostIds.push(task.taskId);
    else if (state.status === 'unreadable') unreadable += 1;
    else {
      stuck[state.status] = (stuck[state.status] ?? 0) + 1;
      stuckIds.push(task.taskId);
    }
    const kind: TaskKind = task.kind;
    if (
      kind !== 'cancel' &&
      (state.status === 'completed' || state.status === 'failed') &&
      task.resultAt === undefined
    ) {
      resultsMissing += 1;
      if (missingIds.length < 50) missingIds.push(task.taskId);
    }
    if (kind === 'progress' && state.status === 'completed' && task.resultAt !== undefined) {
      events.tasks += 1;
      events.expected += PROGRESS_STEPS;
      for (let step = 1; step <= PROGRESS_STEPS; step++) {
        const seen = task.inbox.progress[step] ?? 0;
        if (seen === 0) events.lost += 1;
        else events.duplicated += seen - 1;
      }
    }
    if (kind !== 'cancel' && task.resultAt !== undefined && TERMINAL.has(state.status)) {
      latencies[task.phase].push(task.resultAt - task.createdAt);
    }
  }
  const latency = {} as Checked['latency'];
  for (const phase of ['warmup', 'faults'] as const) {
    const sorted = latencies[phase].sort((a, b) => a - b);
    latency[phase] = { n: sorted.length, p50: percentile(sorted, 50), p99: percentile(sorted, 99) };
  }
  return {
    acknowledged: tasks.length,
    byKind,
    completed,
    failed,
    cancelled,
    stuck,
    lost: lostIds.length,
    lostIds,
    stuckIds,
    unreadable,
    executions: exec,
    completedWithoutExecution,
    events,
    resultsMissing,
    missingIds,
    resumes: tasks.reduce((sum, task) => sum + task.resumes, 0),
    restarts: tasks.reduce((sum, task) => sum + task.restarts, 0),
    latency,
  };
}
