import type { TaskChange } from './task-message.js';
import type { StoredResult, StoredTask } from './task-record.js';

/** How a task ended for its waiters. */
export type TaskEnd =
  | {
      readonly kind: 'terminal';
      /** The task's snapshot (from its channel's message: no owner) or its record (from a re-read). */
      readonly task: StoredTask;
      /**
       * Learnt from the task channel's message (not from a re-read): every message published before it, such
       * as an outbox arrival's, reached this process's subscriber first.
       */
      readonly announced?: true;
      /**
       * The stored outcome, when the message carried it (a finish's message does, up to a size): the same as
       * a read of the task would give, with no read. Absent: read it.
       */
      readonly outcome?: StoredResult;
    }
  | { readonly kind: 'gone' };

/** How a wait through `untilTerminal` ended: the task's end, or the wait's abort. */
export type WaitOutcome = TaskEnd | { readonly kind: 'aborted' };

/**
 * One request waiting on a task: an object the follower calls, not a callback (a waiting request holds this
 * one entry, and the follower holds it in its task's array).
 */
export interface TaskWaiter {
  /** The task ended (terminal, or gone): the waiter is no longer followed when this is called. */
  taskEnded(end: TaskEnd): void;
  /**
   * Optional: a change short of the end (`input_required`, working again, a status message), from the
   * channel's message or the follower's first read; `undefined` when a change may have gone unseen (the
   * subscriber reconnected, a read failed): read the task again. Waiters without it hear only the end.
   */
  taskChanged?(change: TaskChange | undefined): void;
  /**
   * Optional, true: the waiter reads the task itself once `TaskFollower.live` settled (or needs no read). A new
   * follow whose waiters all say so makes no first read of its own.
   */
  readonly readsOnceLive?: boolean;
  /** Optional: an arrival in the task's outbox was announced (its entry id), in order with the task's changes. */
  outboxArrived?(entryId: string): void;
}

/** `Follow.subscribed` once live: shared, so a follow keeps no promise of its own. */
export const SUBSCRIBED: Promise<void> = Promise.resolve();

/** The waiters of one task, and the one channel subscription they share. */
export class Follow {
  readonly taskId: string;
  /** Nearly always one: an array is smaller than a Set (made with its first waiter: an exact fit). */
  waiters: TaskWaiter[] = [];
  /** Receives the task channel's messages (one function per followed task, not per waiter). */
  readonly listener: (message: string) => void;
  /** `pending` until Redis confirmed the SUBSCRIBE; `failed`: subscribed again at the next sweep. */
  subscription: 'pending' | 'live' | 'failed' = 'pending';
  /** Settles once the last SUBSCRIBE was confirmed (rejects as it did when it failed): see `TaskFollower.live`. */
  subscribed: Promise<void> = SUBSCRIBED;
  /** No waiter left: the follow is out of the follower's map. */
  released = false;

  constructor(taskId: string, onMessage: (follow: Follow, message: string) => void) {
    this.taskId = taskId;
    this.listener = (message) => onMessage(this, message);
  }

  add(waiter: TaskWaiter): void {
    if (this.waiters.length === 0) this.waiters = [waiter];
    else this.waiters.push(waiter);
  }

  /** Removes one waiter; true when it was there. */
  remove(waiter: TaskWaiter): boolean {
    const index = this.waiters.indexOf(waiter);
    if (index < 0) return false;
    this.waiters.splice(index, 1);
    return true;
  }

  /** Tells every waiter of the end, once; the follow is released by the caller. */
  end(end: TaskEnd): void {
    const waiters = this.waiters;
    this.waiters = [];
    for (const waiter of waiters) {
      try {
        waiter.taskEnded(end);
      } catch {
        // One faulty waiter must not keep the others waiting.
      }
    }
  }

  /** Tells the waiters that follow the outbox of an arrival. */
  arrived(entryId: string): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.outboxArrived === undefined) continue;
      try {
        waiter.outboxArrived(entryId);
      } catch {
        // ignore: waiters must not break each other
      }
    }
  }

  /** Tells the waiters that follow changes of `change` (undefined: read again). */
  changed(change: TaskChange | undefined): void {
    for (const waiter of [...this.waiters]) {
      if (waiter.taskChanged === undefined) continue;
      try {
        waiter.taskChanged(change);
      } catch {
        // ignore: waiters must not break each other
      }
    }
  }
}
