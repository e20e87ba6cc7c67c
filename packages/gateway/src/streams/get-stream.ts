import type { IncomingMessage, ServerResponse } from 'node:http';
import { EventLog, Keys, type StreamState } from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import { HttpError } from '../messages/http-error.js';
import { connectStream, HELD_LEASE_MS } from './connect-stream.js';
import { QuietIds } from './quiet-id.js';
import { resumeQuietResult } from './result-wait.js';
import { openSessionStream, resumeSessionStream } from './session-stream.js';
import type { SessionContext } from './stream-context.js';
import { runTaskStream } from './task-stream.js';

const GONE_MESSAGE =
  'Gone: the events after Last-Event-ID expired from the stream log; send the request again ' +
  '(tasks/result of a running task waits for it again)';

/**
 * `GET /mcp`: the session's stream, or, with `Last-Event-ID`, the resumption of any stream of the session
 * (its GET stream, a tasks/result or a direct call's response) on this pod, whichever pod it started on:
 * the logged events after that id are replayed, then the stream goes on where it stopped, so nothing is lost
 * and nothing repeated (transport spec, Resumability and Redelivery). A GET stream's ids also name a
 * position in the session's feed, from which its status notifications are sent again (`EventLog.eventId`).
 */
export async function openGetStream(ctx: SessionContext, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const header = req.headers['last-event-id'];
  const lastEventId = (Array.isArray(header) ? header[0] : header)?.trim();
  if (lastEventId === undefined || lastEventId === '') return openSessionStream(ctx, res);
  if (QuietIds.looksQuiet(lastEventId)) return resumeQuiet(ctx, res, lastEventId);
  const parsed = EventLog.parseEventId(lastEventId);
  if (parsed === undefined) {
    throw HttpError.badRequest(
      'Bad Request: Last-Event-ID is not an event id of this server; send the GET without it to open the session stream',
    );
  }
  const { events } = ctx.services;
  const state = await events.state(parsed.streamId);
  // Unknown, expired, or another session's (indistinguishable): the session's stream starts afresh.
  if (state === undefined || state.session !== Keys.digest(ctx.session.sessionId)) {
    ctx.logger.debug({ stream: parsed.streamId }, 'unknown stream to resume; opening the session stream');
    return openSessionStream(ctx, res);
  }
  // Only a session's GET stream has ids with a feed position.
  if (parsed.feedEntryId !== undefined && state.kind !== 'session') {
    throw HttpError.badRequest('Bad Request: Last-Event-ID is not an event id of this stream');
  }
  if (!(await events.complete(parsed.streamId, parsed.entryId))) {
    ctx.logger.warn({ stream: parsed.streamId, kind: state.kind }, 'events to resume from were trimmed');
    if (state.kind === 'session') return openSessionStream(ctx, res);
    throw new HttpError(410, ErrorCode.InvalidRequest, GONE_MESSAGE);
  }
  if (state.kind === 'session') return resumeSessionStream(ctx, res, state, parsed);
  return resumeTaskStream(ctx, res, state, parsed.entryId);
}

/**
 * Resumes from a quiet stream's priming id: the logged stream it became, if it did (its log replayed from
 * the start); otherwise the tasks/result it answers, waited for again (`resumeQuietResult`).
 */
async function resumeQuiet(ctx: SessionContext, res: ServerResponse, lastEventId: string): Promise<void> {
  const target = ctx.services.quietIds.decode(Keys.digest(ctx.session.sessionId), lastEventId);
  if (target === undefined) {
    throw HttpError.badRequest(
      'Bad Request: Last-Event-ID is not an event id of this session; send the GET without it',
    );
  }
  const state = await ctx.services.events.state(target.streamId);
  if (state === undefined) return resumeQuietResult(ctx, res, target);
  if (state.kind !== 'result' || state.session !== Keys.digest(ctx.session.sessionId)) {
    throw HttpError.badRequest('Bad Request: Last-Event-ID is not an event id of this stream');
  }
  if (!(await ctx.services.events.complete(target.streamId, '0-0'))) {
    ctx.logger.warn({ stream: target.streamId, kind: state.kind }, 'events to resume from were trimmed');
    throw new HttpError(410, ErrorCode.InvalidRequest, GONE_MESSAGE);
  }
  return resumeTaskStream(ctx, res, state, '0-0');
}

/** Resumes a tasks/result or direct-call stream: replay, then run it on until its response is out. */
async function resumeTaskStream(
  ctx: SessionContext,
  res: ServerResponse,
  state: StreamState,
  entryId: string,
): Promise<void> {
  const { services } = ctx;
  if (state.kind === 'session' || state.taskId === undefined || state.rpcId === undefined) {
    throw new HttpError(500, ErrorCode.InternalError, 'Internal error: the stream to resume is incomplete');
  }
  // A finished stream with nothing left to send: 204, so the client stops reconnecting.
  if (state.done && (await services.events.readAfter(state.streamId, entryId, 1)).length === 0) {
    res.writeHead(204).end();
    return;
  }
  const ids = { streamId: state.streamId, connectionId: EventLog.newConnectionId() };
  // The newest connection wins: a stale one (its client gone, unnoticed yet) can write nothing more.
  const held = { ...ids, taskId: state.taskId };
  await services.held.hold(held);
  await services.events.takeConnection(ids.streamId, ids.connectionId, HELD_LEASE_MS);
  const stream = connectStream(services, res, ids, state.kind, ctx.logger);
  services.held.dropWhenClosed(held, stream);
  const replayed = await stream.replay(entryId);
  ctx.logger.debug({ stream: ids.streamId, kind: state.kind, replayed }, 'stream resumed');
  if (state.done) {
    stream.end();
    return;
  }
  await runTaskStream(ctx, stream, { kind: state.kind, taskId: state.taskId, rpcId: state.rpcId });
}
