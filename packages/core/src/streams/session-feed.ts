import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** One entry of a session's feed: a task's status changed, or a task's outbox has a message nobody carries. */
export type FeedEntry =
  | { readonly id: string; readonly kind: 'status'; readonly snapshot: string }
  | { readonly id: string; readonly kind: 'outbox'; readonly taskId: string };

export interface SessionFeedOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
}

/**
 * Reads the feed the transition and outbox scripts write for each session (a Redis stream, in the order
 * things happened), so that the session's GET stream, on whichever pod, relays status notifications and
 * uncarried task messages from an exact position, and resumes from there after a reconnect. The feed is
 * also the durable record of the stream's status notifications: they are not copied into its event log,
 * their event ids name their feed entries instead, and a resumption reads them here again.
 */
export class SessionFeed {
  readonly #redis: Redis;
  readonly #keys: Keys;

  constructor(options: SessionFeedOptions) {
    this.#redis = options.redis;
    this.#keys = options.keys ?? new Keys();
  }

  /** The id of the newest entry: where a new GET stream starts ('0-0' for an empty feed). */
  async head(sessionId: string): Promise<string> {
    const [last] = await this.#redis.xrevrange(this.#keys.sessionFeed(sessionId), '+', '-', 'COUNT', 1);
    return last?.[0] ?? '0-0';
  }

  /** Entries after `afterId` (up to `upTo` included, when given), oldest first, at most `count`. */
  async readAfter(sessionId: string, afterId: string, count = 100, upTo = '+'): Promise<FeedEntry[]> {
    const rows = await this.#redis.xrange(this.#keys.sessionFeed(sessionId), `(${afterId}`, upTo, 'COUNT', count);
    return rows.flatMap(([id, fields]): FeedEntry[] => {
      const [field, value = ''] = fields;
      if (field === 's') return [{ id, kind: 'status', snapshot: value }];
      if (field === 'o') return [{ id, kind: 'outbox', taskId: value }];
      return [];
    });
  }
}
