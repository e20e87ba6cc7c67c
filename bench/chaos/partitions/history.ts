/**
 * The partition run's history: every client operation, one JSON line each, with when it was invoked and when it
 * completed (ms since the run began) and what it saw. `ok`: the answer came and is read as the task's state;
 * `fail`: the request certainly did nothing (refused before it touched a task); `info`: ambiguous — a timeout
 * or a lost connection, or an error that does not say what happened — it may or may not have taken effect.
 */
import { appendFileSync, writeFileSync } from 'node:fs';

export type OpKind = 'create' | 'get' | 'list' | 'cancel' | 'result' | 'update' | 'final';
export type OpOutcome = 'ok' | 'fail' | 'info';
export type TaskStatus = 'working' | 'input_required' | 'completed' | 'failed' | 'cancelled';
/** What a read said of a task: a status, or `unknown` (-32602: no such task). */
export type SeenStatus = TaskStatus | 'unknown';

export interface Op {
  /** The client lane (`final` for the read-back at the end). */
  readonly process: string;
  readonly kind: OpKind;
  readonly outcome: OpOutcome;
  readonly invoke: number;
  readonly complete: number;
  readonly gateway?: number;
  /** Sent on revision 2026-07-28 (stateless, the tasks extension); 2025-11-25 otherwise. */
  readonly rev2026?: boolean;
  readonly taskId?: string;
  /** create: the tool, and the result it must return (computed from its arguments). */
  readonly tool?: string;
  readonly expect?: string;
  /** get, final, cancel (its answer, or the status a refusal names), result (the terminal status). */
  readonly status?: SeenStatus;
  /** cancel: refused (-32602) because the task was terminal already; `status` is the one the refusal names. */
  readonly refused?: boolean;
  /** result of a completed task (or a 2026-07-28 get, which inlines it): its text. */
  readonly text?: string;
  /** list: the tasks of the page and their statuses. */
  readonly seen?: ReadonlyArray<{ readonly taskId: string; readonly status: TaskStatus }>;
  /** What went wrong: HTTP status, JSON-RPC error, `no answer`. */
  readonly error?: string;
}

/** Appends operations to a JSON-lines file as they complete. */
export class HistoryWriter {
  readonly #path: string;
  readonly #pending: string[] = [];
  readonly #started = performance.now();
  count = 0;

  constructor(path: string) {
    this.#path = path;
    writeFileSync(path, '');
  }

  /** Milliseconds since the run began (monotonic). */
  now(): number {
    return Math.round((performance.now() - this.#started) * 10) / 10;
  }

  record(op: Op): void {
    this.count += 1;
    this.#pending.push(JSON.stringify(op));
    if (this.#pending.length >= 200) this.flush();
  }

  flush(): void {
    if (this.#pending.length === 0) return;
    appendFileSync(this.#path, `${this.#pending.splice(0).join('\n')}\n`);
  }
}

/** Parses a history file (one operation per line). */
export function parseHistory(text: string): Op[] {
  return text
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Op);
}
