import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** A task stream whose leases (connection, and carrier when it carries) a gateway process holds. */
export interface HeldStream {
  readonly streamId: string;
  readonly connectionId: string;
  readonly taskId: string;
}

export interface GatewayRegistryOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
  /** This process's id (`GatewayRegistry.newId()`). */
  readonly gatewayId: string;
}

/**
 * The gateway processes alive, and the task streams each one holds leases for: what lets a tasks/result or
 * direct-call stream's leases be long (renewed every few minutes, not at every heartbeat) and still be
 * given up within seconds when its process dies. Each process beats once per heartbeat (one ZADD in
 * `{gateways}`) and looks for processes that stopped beating (one ZRANGEBYSCORE); the streams of a dead one
 * are released by whoever finds it, with the same scripts that release them at the end of a stream (fenced by
 * the connection id, so a stream resumed elsewhere keeps its leases). Idle cost: per process, not per stream.
 */
export class GatewayRegistry {
  readonly gatewayId: string;
  readonly #redis: Redis;
  readonly #keys: Keys;
  #beaten = false;
  /** SADDs and SREMs asked for in this event-loop turn: one command each at its end. */
  #pending: { add: Batch; remove: Batch } | undefined;

  constructor(options: GatewayRegistryOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
    this.gatewayId = options.gatewayId;
  }

  /** A new gateway process id. */
  static newId(): string {
    return randomBytes(9).toString('base64url');
  }

  /**
   * Records that this process is alive now. Resolves to false when another process had found it dead and
   * released its streams meanwhile (it was not in the set any more): its streams hold nothing now.
   */
  async beat(now = Date.now()): Promise<boolean> {
    const added = await this.#redis.zadd(this.#keys.gateways(), now, this.gatewayId);
    const first = !this.#beaten;
    this.#beaten = true;
    return first || added === 0;
  }

  /**
   * Records a stream whose leases this process is about to take (before it takes them). The streams recorded
   * or forgotten in one event-loop turn go out in one SADD and one SREM.
   */
  hold(stream: HeldStream): Promise<void> {
    return this.#batched('add', entry(stream));
  }

  /** Forgets a stream whose leases this process gave up (after it gave them up). */
  drop(stream: HeldStream): Promise<void> {
    return this.#batched('remove', entry(stream));
  }

  #batched(op: 'add' | 'remove', member: string): Promise<void> {
    if (this.#pending === undefined) {
      const pending = { add: new Batch(), remove: new Batch() };
      this.#pending = pending;
      setImmediate(() => {
        this.#pending = undefined;
        const key = this.#keys.gatewayStreams(this.gatewayId);
        pending.add.send((members) => this.#redis.sadd(key, ...members));
        pending.remove.send((members) => this.#redis.srem(key, ...members));
      });
    }
    return this.#pending[op].push(member);
  }

  /** The processes whose last beat is older than `deadAfterMs`. */
  async dead(deadAfterMs: number, now = Date.now()): Promise<string[]> {
    const ids = await this.#redis.zrangebyscore(this.#keys.gateways(), '-inf', now - deadAfterMs);
    return ids.filter((id) => id !== this.gatewayId);
  }

  /** The streams a process held leases for. */
  async streamsOf(gatewayId: string): Promise<HeldStream[]> {
    const entries = await this.#redis.smembers(this.#keys.gatewayStreams(gatewayId));
    return entries.flatMap((value) => {
      const [streamId, connectionId, taskId] = value.split(' ');
      return streamId && connectionId && taskId ? [{ streamId, connectionId, taskId }] : [];
    });
  }

  /** Forgets a process (its streams released, or this one shutting down): its set, then its beat. */
  async forget(gatewayId: string): Promise<void> {
    await this.#redis.del(this.#keys.gatewayStreams(gatewayId));
    await this.#redis.zrem(this.#keys.gateways(), gatewayId);
  }
}

/** Members to send in one command, and the callers waiting for it. */
class Batch {
  readonly #members: string[] = [];
  readonly #waiting: { resolve: () => void; reject: (error: unknown) => void }[] = [];

  push(member: string): Promise<void> {
    this.#members.push(member);
    return new Promise((resolve, reject) => this.#waiting.push({ resolve, reject }));
  }

  send(command: (members: string[]) => Promise<unknown>): void {
    if (this.#members.length === 0) return;
    command(this.#members).then(
      () => {
        for (const { resolve } of this.#waiting) resolve();
      },
      (error: unknown) => {
        for (const { reject } of this.#waiting) reject(error);
      },
    );
  }
}

function entry(stream: HeldStream): string {
  return `${stream.streamId} ${stream.connectionId} ${stream.taskId}`;
}
