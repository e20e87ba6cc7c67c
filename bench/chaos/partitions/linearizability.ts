/**
 * A linearizability checker in the manner of Wing & Gong, with Lowe's memo of (linearized set, state) as in
 * Porcupine: the history's call and return events in time order, a search that linearizes some pending call at
 * each step and backtracks at a return whose call could not be placed. An ambiguous operation (the client never
 * learned its outcome) returns at +∞: it may take effect at any point after its call, or never (placed last,
 * where nothing observes it). The model may be nondeterministic: its state can be a set of states.
 */

/** A sequential specification: `step` is the state after `input`, or undefined when that input is impossible. */
export interface Model<S, I> {
  readonly init: S;
  step(state: S, input: I): S | undefined;
  /** Equal states give equal keys (the memo). */
  key(state: S): string;
}

/** One operation: what it asked and saw (`input`), when it was invoked and when it completed (+∞: ambiguous). */
export interface TimedOp<I> {
  readonly input: I;
  readonly invoke: number;
  readonly complete: number;
}

export type Verdict = 'linearizable' | 'not linearizable' | 'unknown (search budget spent)';

interface Entry {
  readonly call: boolean;
  readonly op: number;
  readonly time: number;
  prev: Entry | undefined;
  next: Entry | undefined;
  match: Entry | undefined;
}

function entries<I>(ops: readonly TimedOp<I>[]): Entry {
  const events: Entry[] = [];
  ops.forEach((op, index) => {
    const call: Entry = { call: true, op: index, time: op.invoke, prev: undefined, next: undefined, match: undefined };
    const ret: Entry = {
      call: false,
      op: index,
      time: op.complete,
      prev: undefined,
      next: undefined,
      match: undefined,
    };
    call.match = ret;
    events.push(call, ret);
  });
  // At equal times a call goes first: operations that touch are taken as concurrent (the permissive reading).
  events.sort((a, b) => a.time - b.time || Number(b.call) - Number(a.call));
  const head: Entry = { call: false, op: -1, time: -Infinity, prev: undefined, next: undefined, match: undefined };
  let last = head;
  for (const event of events) {
    last.next = event;
    event.prev = last;
    last = event;
  }
  return head;
}

function lift(entry: Entry): void {
  (entry.prev as Entry).next = entry.next;
  (entry.next as Entry).prev = entry.prev;
  const match = entry.match as Entry;
  (match.prev as Entry).next = match.next;
  if (match.next !== undefined) match.next.prev = match.prev;
}

function unlift(entry: Entry): void {
  const match = entry.match as Entry;
  (match.prev as Entry).next = match;
  if (match.next !== undefined) match.next.prev = match;
  (entry.prev as Entry).next = entry;
  (entry.next as Entry).prev = entry;
}

/** Whether some order of `ops`, respecting real time, is legal for `model`; `budget` bounds the search steps. */
export function checkLinearizable<S, I>(model: Model<S, I>, ops: readonly TimedOp<I>[], budget = 1_000_000): Verdict {
  if (ops.length === 0) return 'linearizable';
  const head = entries(ops);
  const calls: Array<{ entry: Entry; state: S }> = [];
  const memo = new Set<string>();
  let state = model.init;
  let linearized = 0n;
  let entry = head.next as Entry;
  for (let steps = 0; head.next !== undefined; steps++) {
    if (steps > budget) return 'unknown (search budget spent)';
    if (entry.call) {
      const next = model.step(state, (ops[entry.op] as TimedOp<I>).input);
      if (next !== undefined) {
        const withIt = linearized | (1n << BigInt(entry.op));
        const key = `${withIt.toString(36)}|${model.key(next)}`;
        if (!memo.has(key)) {
          memo.add(key);
          calls.push({ entry, state });
          state = next;
          linearized = withIt;
          lift(entry);
          entry = head.next as Entry;
          continue;
        }
      }
      entry = entry.next as Entry;
    } else {
      // A return whose call is still pending: the order so far cannot be extended; undo the last choice.
      const top = calls.pop();
      if (top === undefined) return 'not linearizable';
      entry = top.entry;
      state = top.state;
      linearized &= ~(1n << BigInt(entry.op));
      unlift(entry);
      entry = entry.next as Entry;
    }
  }
  return 'linearizable';
}
