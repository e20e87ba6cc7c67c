/**
 * Queue shards: one tool's jobs spread over N BullMQ queues, each with a hash tag of its own, so that on a Redis
 * Cluster a hot tool's queue traffic is not bound to the one master of one slot. Shard k of N is named so that
 * its slot lies in the k-th of N equal slices of the 16 384 slots: a cluster whose masters own equal ranges then
 * puts N shards on N different masters (random tags collide often). With N = 1 the one queue keeps the tool's
 * queue name, so existing deployments keep their keys.
 */

/** Slots of a Redis Cluster. */
export const CLUSTER_SLOTS = 16_384;

/** Most shards a queue may have. */
export const MAX_QUEUE_SHARDS = 64;

/** CRC16/XMODEM, the checksum Redis Cluster maps keys to slots with. */
export function crc16(text: string): number {
  let crc = 0;
  for (const byte of Buffer.from(text)) {
    crc ^= byte << 8;
    for (let bit = 0; bit < 8; bit++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : (crc << 1) & 0xffff;
  }
  return crc;
}

/** The slot of a hash tag's content (what `CLUSTER KEYSLOT` answers for `{tag}`). */
export function tagSlot(tag: string): number {
  return crc16(tag) % CLUSTER_SLOTS;
}

const names = new Map<string, readonly string[]>();

/**
 * The BullMQ queue names of the N shards of `queue`, shard k first at index k. The name of shard k is
 * `<queue>#<k>`, or `<queue>#<k>.<i>` with the smallest i (base 36) whose slot falls in the k-th slice: a
 * deterministic search, so every process finds the same names. Each name is its queue's hash tag
 * (`Keys.bullPrefix`).
 */
export function shardQueues(queue: string, shards: number): readonly string[] {
  const count = validShardCount(shards);
  if (count === 1) return [queue];
  const memo = `${queue}\u0000${count}`;
  const known = names.get(memo);
  if (known !== undefined) return known;
  const found: string[] = [];
  for (let k = 0; k < count; k++) {
    const low = Math.ceil((k * CLUSTER_SLOTS) / count);
    const high = Math.ceil(((k + 1) * CLUSTER_SLOTS) / count);
    for (let i = 0; ; i++) {
      const name = i === 0 ? `${queue}#${k}` : `${queue}#${k}.${i.toString(36)}`;
      const slot = tagSlot(name);
      if (slot >= low && slot < high) {
        found.push(name);
        break;
      }
    }
  }
  const frozen = Object.freeze(found);
  names.set(memo, frozen);
  return frozen;
}

/**
 * The shard of a task: CRC16 of its id modulo N. A pure function of the id, so every gateway (and the bridge,
 * and an admin cancelling it) finds the same shard; task ids are random, so shards fill evenly.
 */
export function shardOf(taskId: string, shards: number): number {
  const count = validShardCount(shards);
  return count === 1 ? 0 : crc16(taskId) % count;
}

/** The BullMQ queue of a task's job when its tool's queue has `shards` shards. */
export function queueOfTask(queue: string, shards: number, taskId: string): string {
  return shardQueues(queue, shards)[shardOf(taskId, shards)] as string;
}

/**
 * Every queue a task's job may be on: its shard under each of `counts`, the shard counts its tool's queue has
 * had (a job enqueued before a change stays on the old count's shard until it runs). Counts that are not valid
 * are skipped; the names are distinct.
 */
export function queuesOfTask(queue: string, counts: Iterable<number>, taskId: string): string[] {
  const found = new Set<string>();
  for (const count of counts) {
    if (Number.isInteger(count) && count >= 1 && count <= MAX_QUEUE_SHARDS)
      found.add(queueOfTask(queue, count, taskId));
  }
  return [...found];
}

/** The shard count as given, when it is a whole number from 1 to MAX_QUEUE_SHARDS; throws otherwise. */
export function validShardCount(shards: number): number {
  if (!Number.isInteger(shards) || shards < 1 || shards > MAX_QUEUE_SHARDS) {
    throw new RangeError(`queueShards must be a whole number from 1 to ${MAX_QUEUE_SHARDS}, got ${shards}`);
  }
  return shards;
}
