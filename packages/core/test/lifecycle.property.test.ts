import type { TaskStatus } from '@taskgate/protocol';
import { useRedis } from '@taskgate/test-harness';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Keys, type StoredResult, type TaskStore } from '../src/index.js';
import type { TransitionResult } from '../src/tasks/task-store.js';
import { makeStore } from './support.js';

type FinishKind = 'completed' | 'failed' | 'error';
type Op =
  | { readonly kind: 'start' | 'requireInput' | 'resume' | 'setStatusMessage' | 'cancel' | 'cancelAsBroker' }
  | { readonly kind: 'finish'; readonly outcome: FinishKind };
interface Step {
  readonly op: Op;
  /** Which store (and so which Redis connection) issues it. */
  readonly via: number;
}

/** What one issued operation came back with. */
type Reply =
  | { readonly ok: true; readonly status: TaskStatus; readonly version?: number }
  | { readonly ok: false; readonly reason: string; readonly status?: TaskStatus };

/** A published task snapshot, as the Lua scripts encode it. */
interface Snapshot {
  readonly taskId: string;
  readonly status: TaskStatus;
  readonly statusMessage?: string;
  readonly version: string;
  readonly createdAt: string;
  readonly lastUpdatedAt: string;
}

const TERMINAL: ReadonlySet<TaskStatus> = new Set(['completed', 'failed', 'cancelled']);
const OWNER = 'property-owner';
const STORES = 4;

/** LIF-1: status changes the spec allows (a same-status step is only allowed for non-status changes). */
const ALLOWED: Readonly<Record<TaskStatus, readonly TaskStatus[]>> = {
  working: ['input_required', 'completed', 'failed', 'cancelled'],
  input_required: ['working', 'completed', 'failed', 'cancelled'],
  completed: [],
  failed: [],
  cancelled: [],
};

const OUTCOMES: Record<FinishKind, StoredResult> = {
  completed: { result: { content: [{ type: 'text', text: 'done' }] } },
  failed: { result: { content: [{ type: 'text', text: 'tool failed' }], isError: true } },
  error: { error: { code: -32000, message: 'upstream exploded', data: { retry: false } } },
};

const opArb: fc.Arbitrary<Op> = fc.oneof(
  fc.constantFrom<Op>(
    { kind: 'start' },
    { kind: 'requireInput' },
    { kind: 'requireInput' },
    { kind: 'resume' },
    { kind: 'resume' },
    { kind: 'setStatusMessage' },
    { kind: 'cancel' },
    { kind: 'cancelAsBroker' },
  ),
  fc.constantFrom<FinishKind>('completed', 'failed', 'error').map((outcome): Op => ({ kind: 'finish', outcome })),
);
const stepArb: fc.Arbitrary<Step> = fc.record({ op: opArb, via: fc.integer({ min: 0, max: STORES - 1 }) });
/** Batches run one after the other; the steps of one batch run concurrently on different connections. */
const scheduleArb = fc.array(fc.array(stepArb, { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 6 });

function fromTransition(result: TransitionResult): Reply {
  if (result.ok) return { ok: true, status: result.task.status, version: result.task.version };
  return result.reason === 'not_found'
    ? { ok: false, reason: 'not_found' }
    : { ok: false, reason: result.reason, status: result.status };
}

async function issue(store: TaskStore, taskId: string, op: Op, message: string): Promise<Reply> {
  const ref = { taskId, ownerId: Keys.ownerId(OWNER) };
  switch (op.kind) {
    case 'start':
      return fromTransition(await store.start(ref, 1));
    case 'requireInput':
      return fromTransition(await store.requireInput(ref, message));
    case 'resume':
      return fromTransition(await store.resume(ref, message));
    case 'setStatusMessage':
      return fromTransition(await store.setStatusMessage(ref, message));
    case 'finish':
      return fromTransition(await store.finish(ref, OUTCOMES[op.outcome], message));
    case 'cancelAsBroker':
      return fromTransition(await store.cancelAsBroker(ref, message));
    case 'cancel':
      try {
        const task = await store.cancel(OWNER, taskId, message);
        return { ok: true, status: task.status };
      } catch (error) {
        const { code, message: text } = error as { code: unknown; message: string };
        const terminal = /^Cannot cancel task: already in terminal status '(\w+)'$/.exec(text)?.[1];
        expect(code).toBe(-32602);
        expect(terminal, `unexpected cancel error: ${text}`).toBeDefined();
        return { ok: false, reason: 'terminal', status: terminal as TaskStatus };
      }
  }
}

/** The status a successful operation must produce from `before` (undefined when it cannot succeed from there). */
function expectedAfter(op: Op, before: TaskStatus): TaskStatus | undefined {
  if (TERMINAL.has(before)) return undefined;
  switch (op.kind) {
    case 'start':
      return 'working';
    case 'requireInput':
      return before === 'working' ? 'input_required' : undefined;
    case 'resume':
      return before === 'input_required' ? 'working' : undefined;
    case 'setStatusMessage':
      return before;
    case 'finish':
      return op.outcome === 'completed' ? 'completed' : 'failed';
    case 'cancel':
    case 'cancelAsBroker':
      return 'cancelled';
  }
}

describe('task lifecycle under concurrent transitions', () => {
  const redis = useRedis();

  it('[LIF-1][CNL-3] only legal paths, terminal states stick, every change published exactly once with version +1', async () => {
    const stores = Array.from({ length: STORES }, () => makeStore(redis, { maxActivePerOwner: 0 }));
    const keys = new Keys(redis.prefix);
    const reader = redis.connect();
    const subscriber = redis.connect();
    const published = new Map<string, Snapshot[]>();
    const syncChannel = keys.taskChannel('~sync');
    let synced: { token: string; resolve: () => void } | undefined;
    subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      if (channel === syncChannel) {
        if (synced?.token === message) synced.resolve();
        return;
      }
      const list = published.get(channel) ?? [];
      list.push(JSON.parse(message) as Snapshot);
      published.set(channel, list);
    });
    // One pattern subscription, live before any task exists, sees every task channel of this prefix.
    await subscriber.psubscribe(`${keys.prefix}:*:ch:task:*`);

    /** Resolves once every message published before this call has reached the subscriber (Redis keeps order). */
    const drain = async (token: string): Promise<void> => {
      const arrived = new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error('pub/sub sync message did not arrive in 2 s')), 2000);
        synced = {
          token,
          resolve: () => {
            clearTimeout(timer);
            resolve();
          },
        };
      });
      await reader.publish(syncChannel, token);
      await arrived;
    };

    let run = 0;
    let terminalRuns = 0;
    let cancelledRuns = 0;
    await fc.assert(
      fc.asyncProperty(scheduleArb, async (schedule) => {
        run += 1;
        const created = await stores[run % STORES]!.create({ owner: OWNER, tool: 'prop' });
        const taskId = created.taskId;
        const issued: { step: Step; message: string; reply: Reply }[] = [];
        for (const [b, batch] of schedule.entries()) {
          const replies = await Promise.all(
            batch.map((step, s) => issue(stores[step.via]!, taskId, step.op, `m${b}.${s}`)),
          );
          batch.forEach((step, s) => {
            issued.push({ step, message: `m${b}.${s}`, reply: replies[s]! });
          });
        }
        await drain(`${run}`);

        const successes = issued.filter((i) => i.reply.ok);
        // Creation is not published (its creator has it in the answer): it is version 1 here.
        const first = {
          taskId,
          status: created.status,
          version: '1',
          createdAt: String(created.createdAt),
          lastUpdatedAt: String(created.lastUpdatedAt),
        } as unknown as Snapshot;
        const seen = [first, ...(published.get(keys.taskChannel(taskId)) ?? [])];
        published.delete(keys.taskChannel(taskId));
        // Every change a client can see is published exactly once, in order, with versions 2..n and no gaps.
        expect(seen.map((m) => Number(m.version))).toEqual(seen.map((_m, i) => i + 1));
        expect(seen.every((m) => m.taskId === taskId)).toBe(true);
        expect(seen[0]!.status).toBe('working');

        // Match each published change to the one successful operation that made it.
        const byVersion = new Map<number, (typeof issued)[number]>();
        const starts: { item: (typeof issued)[number]; version: number }[] = [];
        for (const item of successes) {
          const version =
            item.reply.ok && item.reply.version !== undefined
              ? item.reply.version
              : Number(seen.find((m) => m.status === 'cancelled')?.version);
          if (item.step.op.kind === 'start') {
            starts.push({ item, version });
            continue;
          }
          expect(byVersion.has(version), `two operations claim version ${version}`).toBe(false);
          byVersion.set(version, item);
        }
        for (const { item, version } of starts) {
          const resumed = seen[version - 2]?.status === 'input_required' && seen[version - 1]?.status === 'working';
          if (resumed && !byVersion.has(version)) byVersion.set(version, item);
          // Otherwise a start of a working task: it records the attempt, changes nothing visible, keeps the version.
          else expect(seen[version - 1]?.status).toBe('working');
        }
        for (let v = 2; v <= seen.length; v++) {
          const before = seen[v - 2]!;
          const after = seen[v - 1]!;
          const item = byVersion.get(v);
          expect(item, `no successful operation produced version ${v}`).toBeDefined();
          const { op } = item!.step;
          // LIF-1: a status change follows the table; a same-status step is a non-status change only.
          if (after.status === before.status) {
            expect(['start', 'setStatusMessage']).toContain(op.kind);
            expect(TERMINAL.has(before.status)).toBe(false);
          } else {
            expect(ALLOWED[before.status]).toContain(after.status);
          }
          expect(after.status).toBe(expectedAfter(op, before.status));
          expect(item!.reply.status).toBe(after.status);
          if (op.kind === 'setStatusMessage') expect(after.statusMessage).toBe(item!.message);
          expect(Number(after.lastUpdatedAt)).toBeGreaterThanOrEqual(Number(before.lastUpdatedAt));
          expect(after.createdAt).toBe(seen[0]!.createdAt);
        }
        // A terminal status is final: nothing is published after it.
        const firstTerminal = seen.findIndex((m) => TERMINAL.has(m.status));
        expect(firstTerminal === -1 || firstTerminal === seen.length - 1).toBe(true);

        const last = seen.at(-1)!;
        const final = await stores[0]!.outcome(OWNER, taskId);
        expect(final.task.status).toBe(last.status);
        expect(final.task.version).toBe(seen.length);
        const active = await reader.zscore(keys.ownerActive(Keys.ownerId(OWNER)), taskId);
        expect(active === null).toBe(TERMINAL.has(last.status));

        for (const { step, reply } of issued) {
          if (reply.ok) continue;
          if (reply.reason === 'terminal') {
            // Refused because the task was terminal: that terminal status is the final one.
            expect(reply.status).toBe(last.status);
          } else {
            expect(reply.reason).toBe('illegal');
            expect(step.op.kind === 'resume' || step.op.kind === 'requireInput').toBe(true);
            expect(reply.status).toBe(step.op.kind === 'resume' ? 'working' : 'input_required');
          }
        }

        if (last.status === 'cancelled') {
          cancelledRuns += 1;
          // CNL-3: a finish after the cancel is refused, the outcome is never written.
          expect(final.outcome).toBeUndefined();
          for (const { step, reply } of issued) {
            if (step.op.kind === 'finish')
              expect(reply).toEqual({ ok: false, reason: 'terminal', status: 'cancelled' });
          }
        } else if (last.status === 'completed' || last.status === 'failed') {
          const winner = byVersion.get(seen.length)!;
          expect(winner.step.op.kind).toBe('finish');
          const op = winner.step.op as Extract<Op, { kind: 'finish' }>;
          expect(final.outcome).toEqual(OUTCOMES[op.outcome]);
        } else {
          expect(final.outcome).toBeUndefined();
        }
        if (TERMINAL.has(last.status)) terminalRuns += 1;
      }),
      { numRuns: 1000 },
    );
    // The schedules really exercised both ends of the lifecycle.
    expect(run).toBeGreaterThanOrEqual(1000);
    expect(cancelledRuns).toBeGreaterThan(100);
    expect(terminalRuns - cancelledRuns).toBeGreaterThan(100);
    expect(terminalRuns).toBeLessThan(run);
  }, 60_000);
});
