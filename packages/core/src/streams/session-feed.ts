import type { Redis } from 'ioredis';
import { Keys } from '../redis/keys.js';

/** One entry of a session's feed: a task's status changed, or a task's outbox has a message nobody carries. */
export type FeedEntry =
  | { readonly id: string; readonly kind: 'status'; readonly snapshot: string }
  | { readonly id: string; readonly kind: 'outbox'; readonly taskId: string };

/** A feed entry as its session's channel announces it, with the id of the entry before it ('0-0': none). */
export interface AnnouncedEntry {
  readonly entry: FeedEntry;
  readonly after: string;
}

/** The feed entry of an entry's announcement (`feed <id> <id before> <field> <value>`); undefined for other messages. */
export function announcedEntry(message: string): AnnouncedEntry | undefined {
  if (!message.startsWith('feed ')) return undefined;
  const idEnd = message.indexOf(' ', 5);
  const afterEnd = idEnd < 0 ? -1 : message.indexOf(' ', idEnd + 1);
  if (afterEnd < 0 || message[afterEnd + 2] !== ' ') return undefined;
  const entry = toEntry(message.slice(5, idEnd), message[afterEnd + 1] ?? '', message.slice(afterEnd + 3));
  return entry === undefined ? undefined : { entry, after: message.slice(idEnd + 1, afterEnd) };
}

function toEntry(id: string, field: string, value: string): FeedEntry | undefined {
  if (field === 's') return { id, kind: 'status', snapshot: value };
  if (field === 'o') return { id, kind: 'outbox', taskId: value };
  return undefined;
}

export interface SessionFeedOptions {
  readonly redis: Redis;
  readonly keys?: Keys;
}

/**
 * Reads the feed the transition and outbox scripts write for each session (a Redis stream, in the order
 * things happened), so that the session's GET stream, on whichever pod, relays status notifications and
 * uncarried task messages from an exact position, and resumes from there after a reconnect. The feed is
 * also the durable record of the stream's status notifications: they are not copied into its event log,
 * their event ids name their feed entries instead, and a resumption reads them here again. Each entry is
 * also announced on the session's channel with the id of the entry before it (`announcedEntry`): a stream
 * that stands at that id relays it without reading the feed.
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
    return rows.flatMap(([id, [field = '', value = '']]): FeedEntry[] => {
      const entry = toEntry(id, field, value);
      return entry === undefined ? [] : [entry];
    });
  }
}
