import type { ServerResponse } from 'node:http';
import {
  errorMessage,
  type FeedEntry,
  Keys,
  recordFromFields,
  SESSION_ENDED,
  type StreamState,
  toTask,
} from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import { HttpError } from '../http/http-error.js';
import { subscribeResourceNotices } from '../resources/resource-notices.js';
import type { SessionContext } from '../rpc/context.js';
import type { OutboxRendering } from '../tasks/outbox-messages.js';
import { OutboxRelay } from '../tasks/outbox-relay.js';
import { resendOrphans } from './carry-outbox.js';
import { connectStream, openLoggedStream, streamLeaseMs } from './connect-stream.js';
import { type LoggedStream, newStreamIds } from './logged-stream.js';
import { understandsPriming } from './task-stream.js';

const FEED_BATCH = 100;

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
 * session's feed and is primed with an event id, so the client can resume it on any pod.
 */
export async function openSessionStream(ctx: SessionContext, res: ServerResponse): Promise<void> {
  const { services } = ctx;
  const ids = newStreamIds();
  await claimSessionLease(ctx, ids.streamId);
  const head = await services.feed.head(ctx.session.sessionId);
  const state = { streamId: ids.streamId, kind: 'session' as const, session: Keys.digest(ctx.session.sessionId) };
  await services.events.create({ ...state, feedPosition: head }, ids.connectionId, streamLeaseMs(services));
  const stream = await openLoggedStream(services, res, ids, 'session', ctx.logger, understandsPriming(ctx.session));
  ctx.logger.debug({ stream: ids.streamId }, 'session stream opened');
  await runSessionStream(ctx, stream, head);
}

/** Resumes the session's GET stream after `entryId` (its events replayed first), on this pod. */
export async function resumeSessionStream(
  ctx: SessionContext,
  res: ServerResponse,
  state: StreamState,
  entryId: string,
): Promise<void> {
  const { services } = ctx;
  await claimSessionLease(ctx, state.streamId);
  const ids = { streamId: state.streamId, connectionId: newStreamIds().connectionId };
  await services.events.takeConnection(ids.streamId, ids.connectionId, streamLeaseMs(services));
  const stream = connectStream(services, res, ids, 'session', ctx.logger);
  await stream.replay(entryId);
  ctx.logger.debug({ stream: ids.streamId }, 'session stream resumed');
  await runSessionStream(ctx, stream, state.feedPosition ?? (await services.feed.head(ctx.session.sessionId)));
}

/**
 * Runs the session's GET stream on this connection from `feedPosition` of the session's feed: status
 * notifications of the session's tasks (NTF-1; the Task as params, no related-task `_meta`, NTF-3), in feed
 * order with the messages of its tasks that no tasks/result stream carries (INP-5: requests with the
 * related-task `_meta`, progress with the original token), and `notifications/tools/list_changed`.
 * Every event is logged with the feed position it came from, so a resumption continues exactly there.
 */
async function runSessionStream(ctx: SessionContext, stream: LoggedStream, feedPosition: string): Promise<void> {
  const { services, session } = ctx;
  const { sessionId } = session;
  const ownerId = Keys.ownerId(ctx.owner);
  const relays = new Map<string, Promise<OutboxRelay | undefined>>();
  let position = feedPosition;
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

  const onEntry = async (entry: FeedEntry): Promise<boolean> => {
    if (entry.kind === 'outbox') {
      await deliver(entry.taskId);
      return true;
    }
    const fields = JSON.parse(entry.snapshot) as Record<string, string> & { taskId: string };
    if (fields.kind === 'direct') return true;
    const notification = {
      jsonrpc: '2.0',
      method: 'notifications/tasks/status',
      params: toTask(recordFromFields(fields.taskId, fields)),
    };
    return await stream.emit(notification, { feed: entry.id });
  };
  const readFeed = (): Promise<void> => {
    if (reading !== undefined) {
      again = true;
      return reading;
    }
    reading = (async () => {
      try {
        do {
          again = false;
          for (;;) {
            const entries = await services.feed.readAfter(sessionId, position, FEED_BATCH);
            for (const entry of entries) {
              if (!(await onEntry(entry))) return;
              position = entry.id;
            }
            if (entries.length < FEED_BATCH) break;
          }
        } while (again && stream.isOpen);
      } finally {
        reading = undefined;
      }
    })();
    return reading;
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
  stream.onClose(async () => {
    await Promise.allSettled(unsubscribes.splice(0).map((unsubscribe) => unsubscribe()));
    // Only the connection that still holds the stream may give the session's lease up (not one resumed elsewhere).
    if (await stream.holds()) await services.sessions.releaseStream(sessionId, stream.streamId);
    ctx.logger.debug({ stream: stream.streamId }, 'session stream closed');
  });
  stream.onHeartbeat(async () => {
    const lease = await services.sessions.claimStream(sessionId, stream.streamId, streamLeaseMs(services));
    if (lease !== 'ok') return stream.end();
    await readFeed();
    await sweep();
  });
  const removeHook = services.bus.onReconnect(safely(() => readFeed().then(sweep)));
  unsubscribes.push(async () => void removeHook());
  try {
    unsubscribes.push(
      await services.bus.subscribe(services.keys.sessionChannel(sessionId), (message) => {
        if (message === SESSION_ENDED) stream.end();
        else safely(readFeed)();
      }),
    );
    unsubscribes.push(
      await services.bus.subscribe(services.keys.toolsChannel(), () => {
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
