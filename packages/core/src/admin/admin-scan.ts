import type { Cluster, Redis } from 'ioredis';
import { isClusterConnection } from '../redis/connection.js';

/** One step of a scan over every master: the keys found and the cursor to go on from ('' = done). */
export interface ScanStep {
  readonly keys: string[];
  readonly cursor: string;
}

/** The servers holding keys: the masters of a cluster, else the one server. */
function servers(redis: Redis): Redis[] {
  return isClusterConnection(redis) ? (redis as unknown as Cluster).nodes('master') : [redis];
}

/**
 * One SCAN step of `pattern` (hashes only) over every master, for operator views that look across owners.
 * The cursor is `<server index>:<SCAN cursor>`; servers are visited in turn. O(keys) overall, COUNT per step.
 */
export async function scanHashes(redis: Redis, pattern: string, cursor: string, count: number): Promise<ScanStep> {
  const nodes = servers(redis);
  const match = /^(\d+):(\d+)$/.exec(cursor);
  let index = match === null ? 0 : Number(match[1]);
  let position = match === null ? '0' : (match[2] as string);
  const node = nodes[index];
  if (node === undefined) return { keys: [], cursor: '' };
  const [next, keys] = await node.scan(position, 'MATCH', pattern, 'COUNT', count, 'TYPE', 'hash');
  position = next;
  if (position === '0') {
    index += 1;
    if (index >= nodes.length) return { keys, cursor: '' };
  }
  return { keys, cursor: `${index}:${position}` };
}
