import type { Redis } from 'ioredis';
import { TaskgateError } from '../errors.js';
import { waitPolicyOf } from './connection.js';

/**
 * Waits until the connection's WAIT policy (TASKGATE_REDIS_WAIT_REPLICAS) holds for the writes this process
 * made to the servers of `keys`: one `WAIT` per key, sent beside a read of that key so that on a cluster it
 * reaches the master of the key's slot (a bare WAIT would go to any node). Does nothing without a policy.
 * Throws `REPLICATION_TIMEOUT` when fewer replicas confirmed in time: the caller must not acknowledge.
 */
export async function awaitReplicas(redis: Redis, keys: readonly string[]): Promise<void> {
  const policy = waitPolicyOf(redis);
  if (policy === undefined) return;
  const confirmed = await Promise.all(
    keys.map(async (key) => {
      const replies = await redis.pipeline().exists(key).wait(policy.replicas, policy.timeoutMs).exec();
      const [error, count] = replies?.[1] ?? [new Error('no reply to WAIT')];
      if (error) throw error;
      return Number(count);
    }),
  );
  const fewest = Math.min(...confirmed);
  if (fewest < policy.replicas) {
    throw new TaskgateError(
      'REPLICATION_TIMEOUT',
      `${fewest} of ${policy.replicas} Redis replicas confirmed the write within ${policy.timeoutMs} ms`,
    );
  }
}
