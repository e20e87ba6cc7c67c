import type { Keys } from '@taskgate/core';
import type { RedisFixture } from '@taskgate/test-harness';

/** A task snapshot as the transition scripts publish it. */
export interface Snapshot {
  readonly taskId: string;
  readonly status: string;
  readonly version: string;
  readonly statusMessage?: string;
}

/** Records every snapshot published on any task channel of `keys`' prefix, from now on. */
export async function recordTaskChannels(fixture: RedisFixture, keys: Keys) {
  const subscriber = fixture.connect();
  const seen = new Map<string, Snapshot[]>();
  subscriber.on('pmessage', (_pattern: string, _channel: string, message: string) => {
    // The task's channel also announces its outbox's arrivals (their entry ids): only snapshots are kept.
    if (!message.startsWith('{')) return;
    const snapshot = JSON.parse(message) as Snapshot;
    seen.set(snapshot.taskId, [...(seen.get(snapshot.taskId) ?? []), snapshot]);
  });
  await subscriber.psubscribe(`${keys.prefix}:*:ch:task:*`);
  return {
    /** Snapshots of one task, in publication order. */
    of: (taskId: string): Snapshot[] => seen.get(taskId) ?? [],
    /** The statuses of one task in publication order, consecutive repeats collapsed. */
    statuses: (taskId: string): string[] =>
      (seen.get(taskId) ?? []).map((s) => s.status).filter((status, i, all) => i === 0 || all[i - 1] !== status),
  };
}
