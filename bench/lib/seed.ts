import { Keys, TaskStore } from '@taskgate/core';
import { Redis } from 'ioredis';

/**
 * Scripts in flight while seeding: ioredis pipelines them (auto-pipelining), so each batch Redis takes at once
 * is at most this long (a few ms of its time), and the gateway's own commands, which time out after 5 s, get
 * their turn between batches even on a loaded machine (4000 at a time kept Redis busy for long stretches).
 */
const WINDOW = 500;
/** The outcome of a finished seeded task. */
const RESULT = { result: { content: [{ type: 'text', text: 'ok' }] } };

export interface SeedOptions {
  /** The owner the tasks belong to: with auth off, a session id. */
  readonly owner: string;
  readonly count: number;
  /** Keep and return the new task ids. */
  readonly collectIds?: boolean;
  /**
   * Finish each task right after creating it (completed, through core's finishTask script), as an owner's
   * history mostly is: the owner's index of non-terminal tasks then stays as small as the per-owner limit
   * keeps it for real owners (100 by default), instead of holding every seeded task.
   */
  readonly finished?: boolean;
  /** Told of the number created so far, every 100 000 tasks. */
  readonly onProgress?: (created: number) => void;
}

/**
 * Creates tasks straight in Redis through core's TaskStore — the same createTask Lua script the gateway
 * runs, so the records and indexes are exactly what real tasks leave — without a job (they stay `working`
 * unless `finished`).
 * Auto-pipelining on a dedicated connection batches thousands of scripts per round trip. The per-owner
 * active-task limit is off for seeding only. The tasks name no session: a session's tasks report every change
 * to its GET stream, and seeding would then measure a million status notifications instead of the store.
 */
export async function seedTasks(url: string, prefix: string, options: SeedOptions): Promise<string[]> {
  const redis = new Redis(url, { enableAutoPipelining: true, maxRetriesPerRequest: null });
  const store = new TaskStore({
    redis,
    keys: new Keys(prefix),
    cursorSecret: 'bench-seeding-cursor-secret',
    limits: { maxActivePerOwner: 0 },
  });
  const ids: string[] = [];
  let next = 0;
  let created = 0;
  const lane = async (): Promise<void> => {
    while (next < options.count) {
      next++;
      const task = await store.create({
        owner: options.owner,
        kind: 'task',
        tool: 'noop',
      });
      if (options.finished === true) {
        const done = await store.finish({ taskId: task.taskId, ownerId: task.ownerId, session: null }, RESULT);
        if (!done.ok) throw new Error(`seeded task ${task.taskId} did not finish: ${done.reason}`);
      }
      if (options.collectIds === true) ids.push(task.taskId);
      if (++created % 100_000 === 0 && created < options.count) options.onProgress?.(created);
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.min(WINDOW, options.count) }, lane));
  } finally {
    await redis.quit().catch(() => redis.disconnect());
  }
  return ids;
}
