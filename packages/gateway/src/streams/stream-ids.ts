import { EventLog } from '@taskgate/core';

/** Where a session's GET stream stands, which every one of its event ids names (see `EventLog.eventId`). */
export interface StreamPositions {
  /** Entry id of the last event logged on the stream (`0-0` before the first). */
  readonly log: string;
  /** The last session-feed entry the stream processed. */
  readonly feed: string;
}

/** A status notification of the session's feed, as the GET stream writes it (not logged). */
export interface FeedEvent {
  readonly feedId: string;
  readonly data: string;
}

/** The status notifications of the session's feed after `after`, up to `upTo` included, oldest first. */
export type FeedEvents = (after: string, upTo: string) => Promise<readonly FeedEvent[]>;

/** A new stream id of a session and a connection id. */
export function newStreamIds(sessionId: string): { streamId: string; connectionId: string } {
  return { streamId: EventLog.newStreamId(sessionId), connectionId: EventLog.newConnectionId() };
}

/** The ordinal of a log entry id `<ms>-<n>` (0 for `0-0`). */
export function ordinalOf(entryId: string): number {
  return Number(entryId.slice(entryId.indexOf('-') + 1));
}
