import type { Redis } from 'ioredis';
import { createRedisConnection, isClusterConnection } from './connection.js';
import { type CatalogKind, Keys } from './keys.js';
import { closeRedis } from './redis-close.js';

/** Receives the raw payload of one pub/sub message. */
export type ChannelListener = (message: string) => void;

/** Ends one subscription (idempotent). */
export type Unsubscribe = () => Promise<void>;

/** SUBSCRIBE or UNSUBSCRIBE of classic channels asked for in one tick: sent as one command. */
interface Batch {
  readonly op: 'subscribe' | 'unsubscribe';
  readonly channels: string[];
  readonly done: Promise<unknown>;
  settle(outcome: Promise<unknown>): void;
}

function newBatch(op: Batch['op'], channel: string): Batch {
  let settle: (outcome: Promise<unknown>) => void = () => {};
  const done = new Promise<unknown>((resolve) => {
    settle = resolve;
  });
  return { op, channels: [channel], done, settle };
}

interface Channel {
  /**
   * Nearly always one (a task's waiters share one listener): an array made with its first element is a tenth
   * of a Set's size, which counts with a subscription per waiting stream.
   */
  readonly listeners: ChannelListener[];
  /** Settles once Redis confirmed the SUBSCRIBE for this channel. */
  readonly subscribed: Promise<unknown>;
}

/** Removes `listener` from the channel's listeners; false when it was not there. */
function removeListener(entry: Channel, listener: ChannelListener): boolean {
  const index = entry.listeners.indexOf(listener);
  if (index < 0) return false;
  entry.listeners.splice(index, 1);
  return true;
}

/**
 * The process's one pub/sub connection, shared by every waiter: channels are subscribed while at least one
 * listener wants them (reference counted) and unsubscribed when the last one leaves. Pub/sub is at-most-once,
 * and a reconnect loses whatever was published meanwhile, so `onReconnect` hooks run after every reconnect
 * (once the subscriptions are back) to let waiters re-read the state they wait on.
 */
export class EventBus {
  readonly #subscriber: Redis;
  readonly #keys: Keys;
  /** On a cluster, the channels of one slot are shard channels (see `Keys.isShardChannel`). */
  readonly #sharded: boolean;
  readonly #channels = new Map<string, Channel>();
  readonly #reconnectHooks = new Set<() => void>();
  /** Listeners of every task's channel (PSUBSCRIBE), for the operator console. */
  readonly #everyTask = new Set<(taskId: string, message: string) => void>();
  #everyTaskSubscribed: Promise<unknown> | undefined;
  /** Classic (un)subscriptions of this tick, in the order asked for; flushed in a microtask. */
  #batches: Batch[] = [];
  #connectedOnce = false;
  #closed = false;

  /** Opens the subscriber connection as a duplicate of `redis` (same server and options); `keys` names the channels. */
  constructor(redis: Redis, keys: Keys) {
    this.#keys = keys;
    this.#sharded = isClusterConnection(redis);
    this.#subscriber = createRedisConnection(redis, 'subscriber');
    this.#subscriber.on('message', (channel: string, message: string) => this.#dispatch(channel, message));
    this.#subscriber.on('smessage', (channel: string, message: string) => this.#dispatch(channel, message));
    this.#subscriber.on('pmessage', (_pattern: string, channel: string, message: string) => {
      const taskId = channel.slice(channel.lastIndexOf(':') + 1);
      for (const listener of [...this.#everyTask]) {
        try {
          listener(taskId, message);
        } catch {
          // One faulty listener must not starve the others.
        }
      }
    });
    this.#subscriber.on('ready', () => this.#onReady());
    // Connection errors are retried by ioredis; waiters recover through the reconnect hooks.
    this.#subscriber.on('error', () => {});
  }

  /** The subscriber connection (for health metrics; never send commands on it). */
  get connection(): Redis {
    return this.#subscriber;
  }

  /** Number of channels currently subscribed. */
  get channelCount(): number {
    return this.#channels.size;
  }

  /**
   * Adds a listener to a channel and resolves once the subscription is live, so a caller can subscribe
   * first and then read the current state without missing a change in between. Returns the unsubscribe.
   * On a cluster, a channel of one slot (one task's, session's or request's: its name has a hash tag) is a
   * shard channel (SSUBSCRIBE: only its shard carries it); process-wide channels are classic.
   */
  async subscribe(channel: string, listener: ChannelListener): Promise<() => Promise<void>> {
    if (this.#closed) throw new Error('EventBus is closed');
    let entry = this.#channels.get(channel);
    if (entry === undefined) {
      const subscribed = this.#isShard(channel)
        ? this.#subscriber.ssubscribe(channel)
        : this.#batched('subscribe', channel);
      entry = { listeners: [listener], subscribed };
      this.#channels.set(channel, entry);
      // Callers see a failed SUBSCRIBE through `await` below; this only keeps it from being unhandled.
      subscribed.catch(() => {});
    } else if (!entry.listeners.includes(listener)) {
      entry.listeners.push(listener);
    }
    try {
      await entry.subscribed;
    } catch (error) {
      // A SUBSCRIBE that failed (e.g. retries exhausted during an outage) is not resent by ioredis: forget the
      // entry, or every later subscribe() to this channel would get the stale rejection and never be live.
      removeListener(entry, listener);
      if (this.#channels.get(channel) === entry) this.#channels.delete(channel);
      throw error;
    }
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      await this.#unsubscribe(channel, listener);
    };
  }

  /**
   * Every change of a task's status or status message (payload: the task's snapshot, JSON) and every arrival in
   * its outbox (payload: the entry id).
   */
  onTaskChange(taskId: string, listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.taskChannel(taskId), listener);
  }

  /**
   * Ends `listener`'s subscription of a task's channel, as the function `onTaskChange` resolved to does: for
   * a caller that keeps no such function per subscription (thousands of waiting requests).
   */
  offTaskChange(taskId: string, listener: ChannelListener): Promise<void> {
    return this.#unsubscribe(this.#keys.taskChannel(taskId), listener);
  }

  /**
   * Every change of every task (the task id and its snapshot), through one pattern subscription. Only where
   * task channels are classic pub/sub (a single server, Sentinel): on a cluster they are shard channels, which
   * patterns do not reach, and this throws.
   */
  async onEveryTaskChange(listener: (taskId: string, message: string) => void): Promise<Unsubscribe> {
    if (this.#closed) throw new Error('EventBus is closed');
    if (this.#sharded) throw new Error('Live task updates of every task need classic pub/sub (not Redis Cluster)');
    this.#everyTask.add(listener);
    this.#everyTaskSubscribed ??= this.#subscriber.psubscribe(this.#keys.taskChannelPattern());
    await this.#everyTaskSubscribed;
    let removed = false;
    return async () => {
      if (removed) return;
      removed = true;
      this.#everyTask.delete(listener);
      if (this.#everyTask.size > 0 || this.#closed) return;
      this.#everyTaskSubscribed = undefined;
      await this.#subscriber.punsubscribe(this.#keys.taskChannelPattern()).catch(() => {});
    };
  }

  /** The id of every cancelled task of the deployment (workers subscribe once per process). */
  onTaskCancelled(listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.cancelledChannel(), listener);
  }

  /**
   * A session's channel: the entries of its feed (`announcedEntry`: its tasks' changes, outbox arrivals no
   * stream carries), `STREAM_RESUMED` and `SESSION_ENDED`.
   */
  onSessionMessage(sessionId: string, listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.sessionChannel(sessionId), listener);
  }

  /** Registrations of one catalog kind by workers (list_changed news). */
  onCatalogChange(kind: CatalogKind, listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.catalogChannel(kind), listener);
  }

  /** Every resource URI a worker announced as updated. */
  onResourceUpdated(listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.resourceUpdatedChannel(), listener);
  }

  /** Changes of a session's resource subscriptions. */
  onSessionSubscriptionsChange(sessionId: string, listener: ChannelListener): Promise<Unsubscribe> {
    return this.subscribe(this.#keys.sessionSubscriptionsChannel(sessionId), listener);
  }

  /** Runs `hook` after every reconnect of the subscriber connection. Returns a function that removes it. */
  onReconnect(hook: () => void): () => void {
    this.#reconnectHooks.add(hook);
    return () => this.#reconnectHooks.delete(hook);
  }

  /** Closes the subscriber connection. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#channels.clear();
    this.#reconnectHooks.clear();
    await closeRedis(this.#subscriber);
  }

  async #unsubscribe(channel: string, listener: ChannelListener): Promise<void> {
    const entry = this.#channels.get(channel);
    if (entry === undefined || !removeListener(entry, listener) || entry.listeners.length > 0) return;
    this.#channels.delete(channel);
    // Commands on one connection run in order: a later SUBSCRIBE to this channel still wins.
    if (this.#closed) return;
    const done = this.#isShard(channel)
      ? this.#subscriber.sunsubscribe(channel)
      : this.#batched('unsubscribe', channel);
    await done.catch(() => {});
  }

  /**
   * Queues a classic SUBSCRIBE or UNSUBSCRIBE: those asked for in one tick go out as one command per run of the
   * same kind, in the order asked for (a tasks/result stream subscribes to its task's channel and its outbox's
   * together, and a busy gateway opens many streams per tick). Settles as that command does.
   */
  #batched(op: Batch['op'], channel: string): Promise<unknown> {
    const last = this.#batches.at(-1);
    if (last !== undefined && last.op === op) {
      last.channels.push(channel);
      return last.done;
    }
    const batch = newBatch(op, channel);
    if (this.#batches.push(batch) === 1) queueMicrotask(() => this.#flush());
    return batch.done;
  }

  #flush(): void {
    const batches = this.#batches;
    this.#batches = [];
    for (const { op, channels, settle } of batches) {
      settle(op === 'subscribe' ? this.#subscriber.subscribe(...channels) : this.#subscriber.unsubscribe(...channels));
    }
  }

  #isShard(channel: string): boolean {
    return this.#sharded && Keys.isShardChannel(channel);
  }

  #dispatch(channel: string, message: string): void {
    const entry = this.#channels.get(channel);
    if (entry === undefined) return;
    for (const listener of [...entry.listeners]) {
      try {
        listener(message);
      } catch {
        // One faulty listener must not starve the others.
      }
    }
  }

  #onReady(): void {
    if (!this.#connectedOnce) {
      this.#connectedOnce = true;
      return;
    }
    // ioredis re-sends SUBSCRIBE for every channel before 'ready'; a PING queued behind them resolves once
    // they are all confirmed, and only then is a re-read safe from missing a change.
    this.#subscriber
      .ping()
      .catch(() => {})
      .then(() => {
        for (const hook of [...this.#reconnectHooks]) {
          try {
            hook();
          } catch {
            // ignore: hooks must not break each other
          }
        }
      });
  }
}
