import { Keys, ListCursorCodec } from '@taskgate/core';
import { seedTasks } from '../lib/seed.js';
import { type LatencySummary, summarize } from '../lib/stats.js';
import { connect } from '../systems/mcp-subject.js';
import type { TaskgateSystem } from '../systems/taskgate.js';

/** d. tasks/list page latency for one owner with `size` tasks. */
export interface ListResult {
  readonly size: number;
  readonly firstPage: LatencySummary;
  /** A page 90 % of the way through the owner's tasks, reached with a cursor. */
  readonly deepPage: LatencySummary;
  /** Tasks on each page (the page size, 50 by default). */
  readonly pageLength: number;
  readonly seedMs: number;
}

/**
 * Grows one owner's task count through `sizes` (seeded in Redis through core's createTask script) and times
 * `tasks/list` through the gateway with the official SDK client: the first page, and a deep page whose
 * cursor the bench signs with the gateway's cursor secret for the entry at 90 % of the owner's index — the
 * same cursor the gateway would have handed out after paging there.
 */
export async function runListPages(
  system: TaskgateSystem,
  sizes: readonly number[],
  samples: number,
): Promise<ListResult[]> {
  const { client, sessionId } = await connect(system.url);
  const ownerId = Keys.ownerId(sessionId);
  const index = system.keys.ownerTasks(ownerId);
  const cursors = new ListCursorCodec(system.cursorSecret, 60 * 60 * 1000);
  const results: ListResult[] = [];
  let seeded = 0;
  try {
    for (const size of [...sizes].sort((a, b) => a - b)) {
      const t0 = performance.now();
      await seedTasks(system.redisServer.url, system.keys.prefix, {
        owner: sessionId,
        count: size - seeded,
      });
      seeded = size;
      const seedMs = performance.now() - t0;
      process.stderr.write(`  seeded ${size} tasks for one owner (${(seedMs / 1000).toFixed(1)} s)\n`);

      const rank = Math.floor(size * 0.9);
      const [id, score] = await system.redis.zrange(index, rank, rank, 'WITHSCORES');
      if (id === undefined || score === undefined) throw new Error(`no entry at rank ${rank} of ${index}`);
      const cursor = cursors.encode(ownerId, { id, score: Number(score) });

      const time = async (pageCursor: string | undefined): Promise<{ summary: LatencySummary; length: number }> => {
        let length = 0;
        for (let i = 0; i < 5; i++) await client.experimental.tasks.listTasks(pageCursor);
        const times: number[] = [];
        for (let i = 0; i < samples; i++) {
          const started = performance.now();
          const page = await client.experimental.tasks.listTasks(pageCursor);
          times.push(performance.now() - started);
          length = page.tasks.length;
        }
        return { summary: summarize(times), length };
      };
      const first = await time(undefined);
      const deep = await time(cursor);
      if (deep.length !== first.length) {
        throw new Error(`deep page of ${size} had ${deep.length} tasks, the first page ${first.length}`);
      }
      results.push({ size, firstPage: first.summary, deepPage: deep.summary, pageLength: first.length, seedMs });
      process.stderr.write(
        `  tasks/list with ${size}: first p50=${first.summary.p50.toFixed(2)} ms, ` +
          `deep p50=${deep.summary.p50.toFixed(2)} ms (${first.length} per page)\n`,
      );
    }
  } finally {
    await client.close().catch(() => {});
  }
  return results;
}
