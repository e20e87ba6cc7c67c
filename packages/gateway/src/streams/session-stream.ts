import type { ServerResponse } from 'node:http';
import {
  announcedEntry,
  EventLog,
  errorMessage,
  type FeedEntry,
  Keys,
  recordFromFields,
  SESSION_ENDED,
  STREAM_RESUMED,
  type StreamState,
  toTask,
} from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import { HttpError } from '../messages/http-error.js';
import type { OutboxRendering } from '../messages/outbox-messages.js';
import { resendOrphans } from './carry-outbox.js';
import { connectStream, streamLeaseMs } from './connect-stream.js';
import type { LoggedStream } from './logged-stream.js';
import { OutboxRelay } from './outbox-relay.js';
import { subscribeResourceNotices } from './resource-notices.js';
import type { SessionContext, StreamServices } from './stream-context.js';
import { type FeedEvent, newStreamIds } from './stream-ids.js';
import { understandsPriming } from './task-stream.js';

const FEED_BATCH = 100;
/** The GET stream sweeps its session's live tasks at one heartbeat in this many (and at open, after a reconnect). */
const SWEEP_EVERY = 20;
/**
 * Published on the session's channel when its GET stream is resumed: a connection still carrying the stream
 * elsewhere stops at once (its logged writes are fenced anyway, but status notifications are not logged).
 */

/** Claims the session's one-GET-stream lease for `streamId`: 404 when the session is gone, 409 when held. */
async function claimSessionLease(ctx: SessionContext, streamId: string): Promise<void> {
  const { sessions } = ctx.services;
  const claimed = await sessions.claimStream(ctx.session.sessionId, streamId, streamLeaseMs(ctx.services));
  if (claimed === 'session_gone') throw HttpError.sessionNotFound();
  if (claimed === 'held_elsewhere') {
    throw new HttpError(409, ErrorCode.InvalidRequest, 'Conflict: this session already has an open GET stream');
  }
}

/**
 * `GET /mcp` without `Last-Event-ID`: the session's stream, new. A lease in Redis keeps it to one open GET
 * stream per session across all gateways, so no message goes out twice. It starts at the head of the
 * session's feed, which its state keeps, and is primed with an event id, so the client can resume it on any
 * pod: the priming event is the one logged event whose id (`<streamId>_<entryId>`) names no feed position,
 * and a resumption from it starts at that head.
 */
export async function openSessionStream(ctx: SessionContext, res: ServerResponse): Promise<void> {
  const { services } = ctx;
  const ids = newStreamIds(ctx.session.sessionId);
  await claimSessionLease(ctx, ids.streamId);
  const head = await services.feed.head(ctx.session.sessionId);
  const state = { streamId: ids.streamId, kind: 'session' as const, session: Keys.digest(ctx.session.sessionId) };
  await services.events.create({ ...state, feedPosition: head }, ids.connectionId, streamLeaseMs(services));
  const priming = understandsPriming(ctx.session)
    ? await services.events.append(ids.streamId, ids.connectionId, '', {}, head)
    : undefined;
  const log = priming === undefined ? '0-0' : priming.slice(ids.streamId.length + 1);
  const stream = connectStream(services, res, ids, 'session', ctx.logger, { log, feed: head });
  if (priming !== undefined) stream.sse.event(priming, '', services.options.sseRetryMs);
  ctx.logger.debug({ stream: ids.streamId }, 'session stream opened');
  await runSessionStream(ctx, stream);
}

/**
 * Resumes the session's GET stream from the positions an event id names (`EventLog.eventId`), on this pod:
 * the logged events after the log position are replayed, each preceded by the feed's status notifications
 * that went out before it, then the stream runs on from the feed position it reached. A
 * `<streamId>_<entryId>` id (the priming event, or an event of a gateway before feed positions) resumes
 * from the feed position the stream's state keeps.
 */
export async function resumeSessionStream(
  ctx: SessionContext,
  res: ServerResponse,
  state: StreamState,
  from: { readonly entryId: string; readonly feedEntryId?: string },
): Promise<void> {
  const { services } = ctx;
  const { sessionId } = ctx.session;
  const feed = from.feedEntryId ?? state.feedPosition ?? (await services.feed.head(sessionId));
  await claimSessionLease(ctx, state.streamId);
  const ids = { streamId: state.streamId, connectionId: EventLog.newConnectionId() };
  await services.events.takeConnection(ids.streamId, ids.connectionId, streamLeaseMs(services));
  await services.sessions.announceStreamResumed(sessionId);
  const stream = connectStream(services, res, ids, 'session', ctx.logger, { log: from.entryId, feed });
  const replayed = await stream.replay(from.entryId, (after, upTo) => feedStatuses(services, sessionId, after, upTo));
  ctx.logger.debug({ stream: ids.streamId, replayed }, 'session stream resumed');
  await runSessionStream(ctx, stream);
}

/** The `notifications/tasks/status` of a status entry of the feed; undefined for a direct call's (no task). */
function statusNotification(snapshot: string): Record<string, unknown> | undefined {
  const fields = JSON.parse(snapshot) as Record<string, string> & { taskId: string };
  if (fields.kind === 'direct') return undefined;
  return {
    jsonrpc: '2.0',
    method: 'notifications/tasks/status',
    params: toTask(recordFromFields(fields.taskId, fields)),
  };
}

/** The status notifications of the session's feed after `after`, up to `upTo` included (a replay's). */
async function feedStatuses(
  services: StreamServices,
  sessionId: string,
  after: string,
  upTo: string,
): Promise<FeedEvent[]> {
  const events: FeedEvent[] = [];
  for (let from = after; ; ) {
    const entries = await services.feed.readAfter(sessionId, from, FEED_BATCH, upTo);
    for (const entry of entries) {
      const notification = entry.kind === 'status' ? statusNotification(entry.snapshot) : undefined;
      if (notification !== undefined) events.push({ feedId: entry.id, data: JSON.stringify(notification) });
    }
    const last = entries.at(-1);
    if (last === undefined || entries.length < FEED_BATCH) return events;
    from = last.id;
  }
}

/**
 * Runs the session's GET stream on this connection from the stream's feed position: status notifications
 * of the session's tasks (NTF-1; the Task as params, no related-task `_meta`, NTF-3), in feed order with the
 * messages of its tasks that no tasks/result stream carries (INP-5: requests with the related-task `_meta`,
 * progress with the original token), and list-changed and resource notifications. Status notifications
 * are not logged (their ids name their feed entries); everything else is, with the feed position, so a
 * resumption continues exactly there.
 */
async function runSessionStream(ctx: SessionContext, stream: LoggedStream): Promise<void> {
  const { services, session } = ctx;
  const { sessionId } = session;
  const ownerId = Keys.ownerId(ctx.owner);
  const relays = new Map<string, Promise<OutboxRelay | undefined>>();
  let position = stream.feedPosition ?? (await services.feed.head(sessionId));
  let reading: Promise<void> | undefined;
  let again = false;

  const relayOf = (taskId: string): Promise<OutboxRelay | undefined> => {
    let relay = relays.get(taskId);
    if (relay === undefined) {
      relay = services.tasks.read(taskId).then((task) => {
        if (task === undefined) return undefined;
        const rendering = async (): Promise<OutboxRendering> => {
          const logLevel = await services.sessions.logLevel(sessionId);
          return {
            ...(task.progressToken !== undefined && { progressToken: task.progressToken }),
            ...(logLevel !== undefined && { logLevel }),
            relatedTaskId: taskId,
          };
        };
        const expiresAt = task.createdAt + task.ttl;
        return new OutboxRelay(services.outbox, services.delivery, stream, {
          taskId,
          mode: 'fallback',
          expiresAt,
          rendering,
        });
      });
      relays.set(taskId, relay);
    }
    return relay;
  };
  const deliver = async (taskId: string): Promise<void> => {
    let relay: OutboxRelay | undefined;
    try {
      relay = await relayOf(taskId);
      await relay?.pump();
    } finally {
      if (relay === undefined || !relay.busy) relays.delete(taskId);
    }
  };

  // False when the stream ended: the entry is left for a resumption.
  const onEntry = async (entry: FeedEntry): Promise<boolean> => {
    if (entry.kind === 'outbox') {
      await deliver(entry.taskId);
      return true;
    }
    const notification = statusNotification(entry.snapshot);
    return notification === undefined ? true : await stream.status(entry.id, notification);
  };
  const relay = async (entry: FeedEntry): Promise<boolean> => {
    if (!(await onEntry(entry))) return false;
    position = entry.id;
    stream.passFeed(entry.id);
    return true;
  };
  // Reads the feed from the stream's position, again while something asked for a read meanwhile.
  const drain = async (): Promise<void> => {
    do {
      again = false;
      for (;;) {
        const entries = await services.feed.readAfter(sessionId, position, FEED_BATCH);
        for (const entry of entries) if (!(await relay(entry))) return;
        if (entries.length < FEED_BATCH) break;
      }
    } while (again && stream.isOpen);
  };
  // One relay at a time: a read asked for during another one runs right after it, within the same promise.
  const exclusively = (work: () => Promise<void>): Promise<void> => {
    reading = work().finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const readFeed = (): Promise<void> => {
    if (reading === undefined) return exclusively(drain);
    again = true;
    return reading;
  };
  // An announced entry that follows the one this stream stands at is relayed from its announcement, and so
  // are the ones announced right after it while it is relayed (`pending`, each following the one before:
  // `tail`); any other (one came while the feed was read, or the subscription missed some) has the feed read
  // from there. A burst of finishes is then relayed from its announcements, not from a read of the feed.
  const pending: FeedEntry[] = [];
  let tail: string | undefined;
  const onAnnounced = (message: string): Promise<void> => {
    const next = announcedEntry(message);
    if (next !== undefined && reading !== undefined && !again && next.after === tail) {
      pending.push(next.entry);
      tail = next.entry.id;
      return reading;
    }
    if (next === undefined || reading !== undefined || next.after !== position) return readFeed();
    tail = next.entry.id;
    return exclusively(async () => {
      try {
        for (let entry: FeedEntry | undefined = next.entry; entry !== undefined; entry = pending.shift()) {
          if (!stream.isOpen || !(await relay(entry))) return;
        }
      } finally {
        // Entries left here (a relay failed, the stream ended) are still in the feed, after `position`.
        pending.length = 0;
        tail = undefined;
      }
      if (again && stream.isOpen) await drain();
    });
  };
  // Tasks whose messages wait with nobody carrying them (a carrier's pod died, or they came before this
  // stream), and unanswered requests whose stream is gone for good (the client opened a new GET stream).
  const sweep = async (): Promise<void> => {
    for (const task of await services.delivery.sessionTasks(ownerId, sessionId)) {
      if (task.carried) continue;
      if (task.waiting) await resendOrphans(ctx, stream, task.taskId, async () => ({ relatedTaskId: task.taskId }));
      if (task.undelivered) await deliver(task.taskId);
    }
  };
  const safely = (work: () => Promise<void>) => (): void => {
    if (!stream.isOpen) return;
    work().catch((error: unknown) => ctx.logger.warn({ err: errorMessage(error) }, 'session stream relay failed'));
  };

  const unsubscribes: (() => Promise<void>)[] = [];
  let beats = 0;
  stream.onClose(async () => {
    await Promise.allSettled(unsubscribes.splice(0).map((unsubscribe) => unsubscribe()));
    // Only the connection that still holds the stream may give the session's lease up (not one resumed elsewhere).
    if (await stream.holds()) await services.sessions.releaseStream(sessionId, stream.streamId);
    ctx.logger.debug({ stream: stream.streamId }, 'session stream closed');
  });
  stream.onHeartbeat(async () => {
    const lease = await services.sessions.claimStream(
      sessionId,
      stream.streamId,
      streamLeaseMs(services),
      ctx.session.principalId,
    );
    if (lease !== 'ok') return stream.end();
    await readFeed();
    // The sweep reads every live task of the owner: a safety net only, at one heartbeat in SWEEP_EVERY. What it
    // looks for announces itself on the feed: a stream that ends, and the streams of a gateway that died (released
    // by another one, `HeldStreams`), give their carrier leases up with an outbox entry on the session's feed.
    beats += 1;
    if (beats % SWEEP_EVERY === 0) await sweep();
  });
  const removeHook = services.bus.onReconnect(safely(() => readFeed().then(sweep)));
  unsubscribes.push(async () => void removeHook());
  try {
    unsubscribes.push(
      await services.bus.onSessionMessage(sessionId, (message) => {
        if (message === SESSION_ENDED) stream.end();
        else if (message === STREAM_RESUMED) {
          safely(async () => {
            if (!(await stream.holds())) stream.end();
          })();
        } else safely(() => onAnnounced(message))();
      }),
    );
    unsubscribes.push(
      await services.bus.onCatalogChange('tools', () => {
        void stream.emit({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' }).catch(() => false);
      }),
    );
    // Resource and prompt list changes, and updates of the resources this session subscribed to.
    unsubscribes.push(...(await subscribeResourceNotices(services, sessionId, (m) => stream.emit(m), ctx.logger)));
  } catch {
    stream.end(services.options.sseRetryMs);
    return;
  }
  // The client may have gone while we subscribed (the cleanup may have run already: unsubscribing is idempotent).
  if (stream.signal.aborted) {
    await Promise.allSettled(unsubscribes.map((unsubscribe) => unsubscribe()));
    return;
  }
  // The first read covers whatever happened between the feed position and the subscription.
  safely(() => readFeed().then(sweep))();
}
