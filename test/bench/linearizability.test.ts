import { describe, expect, it } from 'vitest';
import { checkPartitionHistory } from '../../bench/chaos/partitions/check.js';
import type { Op } from '../../bench/chaos/partitions/history.js';
import { checkLinearizable, type Model } from '../../bench/chaos/partitions/linearizability.js';
import { partitionProblems } from '../../bench/chaos/partitions/report.js';
import { anomaliesOf, splitByTask, type TaskHistory, taskModel } from '../../bench/chaos/partitions/task-model.js';

const EXPECT = 'echo 7';
const create: Op = {
  process: 'a',
  kind: 'create',
  outcome: 'ok',
  invoke: 0,
  complete: 10,
  taskId: 't1',
  tool: 'part_echo',
  expect: EXPECT,
};
const get = (invoke: number, complete: number, status: Op['status'], process = 'b'): Op => ({
  process,
  kind: 'get',
  outcome: 'ok',
  invoke,
  complete,
  taskId: 't1',
  ...(status !== undefined && { status }),
});
const result = (invoke: number, complete: number, text: string): Op => ({
  process: 'c',
  kind: 'result',
  outcome: 'ok',
  invoke,
  complete,
  taskId: 't1',
  status: 'completed',
  text,
});
const cancel = (invoke: number, complete: number, outcome: Op['outcome'], status?: Op['status']): Op => ({
  process: 'd',
  kind: 'cancel',
  outcome,
  invoke,
  complete,
  taskId: 't1',
  ...(status !== undefined && { status }),
});

/** The one task's history of `ops`, checked. */
function verdict(ops: readonly Op[]): { verdict: string; history: TaskHistory } {
  const [history] = splitByTask(ops);
  if (history === undefined) throw new Error('no task in the history');
  return { verdict: checkLinearizable(taskModel(history.expect), history.ops), history };
}

describe('the task model and the linearizability checker', () => {
  it('accepts a task read while working, then completed with the tool’s result', () => {
    const ops = [create, get(12, 20, 'working'), get(21, 30, 'completed'), result(31, 40, EXPECT)];
    expect(verdict(ops).verdict).toBe('linearizable');
  });

  it('accepts concurrent reads that saw the completion in either order', () => {
    // The read that saw completed returned first, but the other overlapped it: working may come first.
    const ops = [create, get(12, 30, 'working', 'b'), get(13, 20, 'completed', 'e')];
    expect(verdict(ops).verdict).toBe('linearizable');
  });

  it('accepts an ambiguous cancel that took effect, and one that did not', () => {
    const took = [create, cancel(12, 15, 'info'), get(20, 25, 'cancelled')];
    const didNot = [create, cancel(12, 15, 'info'), get(20, 25, 'working'), result(30, 40, EXPECT)];
    expect(verdict(took).verdict).toBe('linearizable');
    expect(verdict(didNot).verdict).toBe('linearizable');
  });

  it('accepts a cancel refused because the task had completed meanwhile', () => {
    const ops = [create, get(12, 14, 'working'), cancel(15, 20, 'ok', 'completed'), result(21, 30, EXPECT)];
    expect(verdict(ops).verdict).toBe('linearizable');
  });

  it('accepts two concurrent cancels when the later one is refused naming cancelled', () => {
    const refused: Op = { ...cancel(13, 30, 'ok', 'cancelled'), process: 'e', refused: true };
    const ops = [create, cancel(12, 20, 'ok', 'cancelled'), refused, get(31, 35, 'cancelled')];
    expect(verdict(ops).verdict).toBe('linearizable');
    const bothApplied = [create, cancel(12, 20, 'ok', 'cancelled'), { ...refused, refused: false }];
    const { verdict: seen, history } = verdict(bothApplied);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['cancelled twice']);
  });

  it('refuses a cancel acknowledged after a read saw the task cancelled (the first cancel undone)', () => {
    const ops = [create, cancel(12, 14, 'info'), get(15, 18, 'cancelled'), cancel(20, 25, 'ok', 'cancelled')];
    const { verdict: seen, history } = verdict(ops);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['cancelled twice']);
  });

  it('names a task unknown after a read showed it as lost, even before its create was answered', () => {
    // The create's answer came late (20); a read saw the task at 12-14, another found nothing at 15-18.
    const slowCreate: Op = { ...create, complete: 20 };
    const { verdict: seen, history } = verdict([slowCreate, get(12, 14, 'working'), get(15, 18, 'unknown')]);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['lost']);
  });

  it('refuses a terminal status that changes: completed, then cancelled', () => {
    const ops = [create, get(12, 20, 'completed'), cancel(21, 25, 'ok', 'cancelled'), get(30, 35, 'cancelled')];
    const { verdict: seen, history } = verdict(ops);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toContain('terminal changed');
  });

  it('refuses a task lost after its acknowledgement', () => {
    const ops = [create, get(12, 20, 'working'), get(30, 40, 'unknown')];
    const { verdict: seen, history } = verdict(ops);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['lost']);
  });

  it('refuses a result other than what the tool returned', () => {
    const { verdict: seen, history } = verdict([create, result(12, 20, 'echo 8')]);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['wrong result']);
  });

  it('refuses a status going backwards: completed, then working', () => {
    const ops = [create, get(12, 20, 'completed', 'b'), get(21, 25, 'working', 'b')];
    const { verdict: seen, history } = verdict(ops);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['went backwards']);
  });

  it('refuses a stale read invoked after a newer one completed, on another client', () => {
    // Client b saw completed at 20; client e asked at 22 (after b's answer) and saw working: stale.
    const ops = [create, get(15, 20, 'completed', 'b'), get(22, 40, 'working', 'e')];
    const { verdict: seen, history } = verdict(ops);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['went backwards']);
  });

  it('refuses a cancelled task that later completes, though a list read saw it cancelled', () => {
    const list: Op = {
      process: 'f',
      kind: 'list',
      outcome: 'ok',
      invoke: 15,
      complete: 18,
      seen: [{ taskId: 't1', status: 'cancelled' }],
    };
    const { verdict: seen, history } = verdict([create, cancel(11, 14, 'info'), list, result(20, 30, EXPECT)]);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toContain('terminal changed');
  });

  it('reads 2026-07-28 operations: an acknowledged update or cancel of a finished task, a get with the result', () => {
    const rev2026 = { rev2026: true, process: 'g' } as const;
    const update: Op = { ...rev2026, kind: 'update', outcome: 'ok', invoke: 12, complete: 14, taskId: 't1' };
    const asking = get(15, 16, 'input_required');
    const done: Op = { ...get(20, 22, 'completed'), ...rev2026, text: EXPECT };
    const lateCancel: Op = { ...rev2026, kind: 'cancel', outcome: 'ok', invoke: 30, complete: 31, taskId: 't1' };
    expect(verdict([create, update, asking, done, lateCancel, get(40, 41, 'completed')]).verdict).toBe('linearizable');
    // After an acknowledged cancel the task is terminal: seen working again, it went backwards.
    const cancelFirst = { ...lateCancel, invoke: 17, complete: 18 };
    expect(verdict([create, asking, cancelFirst, get(19, 20, 'cancelled'), done]).verdict).toBe('not linearizable');
    const { verdict: seen, history } = verdict([create, cancelFirst, get(19, 20, 'working', 'b')]);
    expect(seen).toBe('not linearizable');
    expect(anomaliesOf(history)).toEqual(['went backwards']);
    // An update acknowledged before the task existed, and a 2026 get with another tool's text, are refused.
    const early: Op = { ...update, invoke: 1, complete: 2 };
    expect(verdict([{ ...create, invoke: 5 }, early]).verdict).toBe('not linearizable');
    const wrong = verdict([create, { ...done, text: 'echo 8' }]);
    expect(wrong.verdict).toBe('not linearizable');
    expect(anomaliesOf(wrong.history)).toEqual(['wrong result']);
  });

  it('leaves out creates that were never acknowledged, and reads that saw nothing', () => {
    const { taskId: _never, ...unacknowledged } = create;
    const lostCreate: Op = { ...unacknowledged, outcome: 'info', complete: 3000 };
    const unanswered: Op = { ...get(12, 3000, undefined), outcome: 'info', error: 'no answer' };
    const histories = splitByTask([lostCreate, create, unanswered]);
    expect(histories.map((history) => history.ops.length)).toEqual([1]);
  });

  it('backtracks: a register model needs a later placement of an earlier call', () => {
    // write(1) overlaps read()=1 and read()=0; only write after read 0 and before read 1 works.
    const register: Model<number, { w?: number; r?: number }> = {
      init: 0,
      key: String,
      step: (state, input) => (input.w !== undefined ? input.w : input.r === state ? state : undefined),
    };
    const ops = [
      { input: { w: 1 }, invoke: 0, complete: 100 },
      { input: { r: 1 }, invoke: 50, complete: 60 },
      { input: { r: 0 }, invoke: 10, complete: 20 },
    ];
    expect(checkLinearizable(register, ops)).toBe('linearizable');
    const impossible = [...ops, { input: { r: 0 }, invoke: 70, complete: 80 }];
    expect(checkLinearizable(register, impossible)).toBe('not linearizable');
  });

  it('fails a run on a stuck task under WAIT, and only reports one under asynchronous replication', () => {
    const stuck: Op = {
      process: 'final',
      kind: 'final',
      outcome: 'ok',
      invoke: 50,
      complete: 51,
      taskId: 't1',
      status: 'working',
    };
    const failover = {
      kind: 'replication cut, primary killed, failover',
      target: 'r1',
      from: 20,
      to: 30,
      settled: 40,
      failover: true,
    } as const;
    const checked = (replication: 'wait' | 'async') =>
      partitionProblems(
        checkPartitionHistory([create, stuck], new Map([['t1', 1]]), [failover], replication, new Set()),
        replication,
      );
    expect(checked('wait')).toEqual(['1 tasks stuck']);
    expect(checked('async')).toEqual([]);
  });
});
