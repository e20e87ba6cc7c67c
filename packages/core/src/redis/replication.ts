import type { Redis } from 'ioredis';
import { TaskgateError } from '../errors.js';
import { isClusterConnection, waitPolicyOf } from './connection.js';
import { pipelineValues } from './pipeline-replies.js';

/**
 * Waits until the connection's WAIT policy (TASKGATE_REDIS_WAIT_REPLICAS) holds for the writes this process
 * made to the servers of `keys`: a `WAIT` sent beside a read of a key, so that on a cluster it reaches the
 * master of the key's slot (a bare WAIT would go to any node). Does nothing without a policy.
 * Throws `REPLICATION_TIMEOUT` when fewer replicas confirmed in time: the caller must not acknowledge.
 *
 * WAIT blocks the connection that sent it, and it covers every write that connection made before it. So the
 * callers of one connection and one server share their WAITs: one round at a time, and whoever arrives while
 * one is out joins the next. Sent one per caller, N concurrent creates queued N WAITs behind each other, and
 * with the replicas gone each create was answered only after N times the timeout.
 */
export async function awaitReplicas(redis: Redis, keys: readonly string[]): Promise<void> {
  const policy = waitPolicyOf(redis);
  if (policy === undefined) return;
  // A single server takes every write of the connection: one WAIT covers them all. A cluster: one per slot tag.
  const cluster = isClusterConnection(redis);
  const targets = new Map<string, string>();
  for (const key of keys) targets.set(cluster ? hashTagOf(key) : '', key);
  const rounds = roundsOf(redis);
  const confirmed = await Promise.all(
    [...targets].map(([target, key]) => {
      let group = rounds.get(target);
      if (group === undefined) {
        group = new WaitRounds(() => waitOnce(redis, key, policy.replicas, policy.timeoutMs));
        rounds.set(target, group);
      }
      return group.join();
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

/** Is this the refusal of `awaitReplicas`: the writes were not confirmed by the replicas in time? */
export function isReplicationTimeout(error: unknown): boolean {
  return error instanceof TaskgateError && error.code === 'REPLICATION_TIMEOUT';
}

async function waitOnce(redis: Redis, key: string, replicas: number, timeoutMs: number): Promise<number> {
  const replies = await redis.pipeline().exists(key).wait(replicas, timeoutMs).exec();
  return Number(pipelineValues(replies, 2)[1]);
}

/** The WAIT rounds of each connection, by target server (slot tag on a cluster, '' on a single server). */
const roundsByConnection = new WeakMap<Redis, Map<string, WaitRounds>>();

function roundsOf(redis: Redis): Map<string, WaitRounds> {
  let rounds = roundsByConnection.get(redis);
  if (rounds === undefined) {
    rounds = new Map();
    roundsByConnection.set(redis, rounds);
  }
  return rounds;
}

/** The hash tag of a key as Redis Cluster reads it (the text between the first `{` and the next `}`), else the key. */
function hashTagOf(key: string): string {
  const open = key.indexOf('{');
  const close = open < 0 ? -1 : key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : key;
}

/**
 * One WAIT out at a time. A caller's writes were sent before it joins, so the round already out may have left
 * before them: it joins the next round, which leaves when the current one ends. Each caller waits two rounds
 * at most, whatever the number of callers.
 */
class WaitRounds {
  #current: Promise<number> | undefined;
  #next: Promise<number> | undefined;

  constructor(private readonly send: () => Promise<number>) {}

  join(): Promise<number> {
    if (this.#current === undefined) return this.#start();
    this.#next ??= this.#current.then(
      () => this.#advance(),
      () => this.#advance(),
    );
    return this.#next;
  }

  #advance(): Promise<number> {
    this.#next = undefined;
    return this.#start();
  }

  #start(): Promise<number> {
    const round = this.send();
    this.#current = round;
    const clear = (): void => {
      if (this.#current === round) this.#current = undefined;
    };
    round.then(clear, clear);
    return round;
  }
}
