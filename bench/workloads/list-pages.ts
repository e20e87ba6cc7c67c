import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { Keys, ListCursorCodec } from '@taskgate/core';
import type { Redis } from 'ioredis';
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

/** One owner of the workload: its session, its SDK client and the cursor of its deep page. */
interface Owner {
  readonly size: number;
  readonly client: Client;
  readonly deepCursor: string;
  readonly seedMs: number;
  readonly first: number[];
  readonly deep: number[];
  pageLength: number;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Waits until Redis has settled after seeding: it answers a PING in under 2 ms five times in a row (the
 * seeding's replies are out, incremental rehashing of the grown keyspace no longer stalls it), 60 s at most.
 */
async function settle(redis: Redis): Promise<void> {
  const deadline = performance.now() + 60_000;
  let quick = 0;
  while (quick < 5 && performance.now() < deadline) {
    const started = performance.now();
    await redis.ping();
    quick = performance.now() - started < 2 ? quick + 1 : 0;
    await sleep(100);
  }
}

/**
 * One owner per size (each its own session, so its own index), seeded in Redis through core's createTask
 * and finishTask scripts (finished tasks, as an owner's history is: a real owner has at most 100 live ones by
 * default, and a session's GET stream sweeps its owner's live tasks at every heartbeat), then `tasks/list` timed through the gateway with the official SDK client: the first page, and a
 * deep page whose cursor the bench signs with the gateway's cursor secret for the entry at 90 % of the
 * owner's index — the same cursor the gateway would have handed out after paging there. The samples of all
 * sizes are taken in turns, in the same seconds and on the same keyspace, after everything is seeded and
 * Redis has settled: the sizes then differ only in the owner's number of tasks, not in the machine's load,
 * the garbage the seeding left or how busy Redis still was (sampled right after seeding 1M tasks, a size
 * measured the seeding's aftermath).
 */
export async function runListPages(
  system: TaskgateSystem,
  sizes: readonly number[],
  samples: number,
): Promise<ListResult[]> {
  const cursors = new ListCursorCodec(system.cursorSecret, 60 * 60 * 1000);
  const owners: Owner[] = [];
  try {
    for (const size of [...sizes].sort((a, b) => a - b)) {
      const { client, sessionId } = await connect(system.url);
      const ownerId = Keys.ownerId(sessionId);
      const index = system.keys.ownerTasks(ownerId);
      const t0 = performance.now();
      await seedTasks(system.redisServer.url, system.keys.prefix, {
        owner: sessionId,
        count: size,
        finished: true,
        onProgress: (done) => process.stderr.write(`  … ${done} of ${size}\n`),
      });
      const seedMs = performance.now() - t0;
      const memory = /used_memory_human:(\S+)/.exec(await system.redis.info('memory'))?.[1] ?? '?';
      process.stderr.write(
        `  seeded ${size} tasks for one owner (${(seedMs / 1000).toFixed(1)} s; Redis uses ${memory})\n`,
      );
      const rank = Math.floor(size * 0.9);
      const [id, score] = await system.redis.zrange(index, rank, rank, 'WITHSCORES');
      if (id === undefined || score === undefined) throw new Error(`no entry at rank ${rank} of ${index}`);
      const deepCursor = cursors.encode(ownerId, { id, score: Number(score) });
      owners.push({ size, client, deepCursor, seedMs, first: [], deep: [], pageLength: 0 });
    }
    await settle(system.redis);

    const time = async (owner: Owner, cursor: string | undefined, into: number[]): Promise<void> => {
      const started = performance.now();
      const page = await owner.client.experimental.tasks.listTasks(cursor);
      into.push(performance.now() - started);
      if (cursor === undefined) owner.pageLength = page.tasks.length;
      else if (page.tasks.length !== owner.pageLength) {
        throw new Error(
          `deep page of ${owner.size} had ${page.tasks.length} tasks, the first page ${owner.pageLength}`,
        );
      }
    };
    for (const owner of owners) {
      for (let i = 0; i < 5; i++) {
        await time(owner, undefined, []);
        await time(owner, owner.deepCursor, []);
      }
    }
    // In turns, each round starting at the next owner, so no size always follows the same one.
    for (let round = 0; round < samples; round++) {
      for (let k = 0; k < owners.length; k++) {
        const owner = owners[(round + k) % owners.length] as Owner;
        await time(owner, undefined, owner.first);
        await time(owner, owner.deepCursor, owner.deep);
      }
    }
    return owners.map((owner) => {
      const result = {
        size: owner.size,
        firstPage: summarize(owner.first),
        deepPage: summarize(owner.deep),
        pageLength: owner.pageLength,
        seedMs: owner.seedMs,
      };
      process.stderr.write(
        `  tasks/list with ${owner.size}: first p50=${result.firstPage.p50.toFixed(2)} ms, ` +
          `deep p50=${result.deepPage.p50.toFixed(2)} ms (${owner.pageLength} per page)\n`,
      );
      return result;
    });
  } finally {
    await Promise.all(owners.map((owner) => owner.client.close().catch(() => {})));
  }
}
