import type { ServerResponse } from 'node:http';
import type { Logger } from '@taskgate/core';
import { LoggedStream } from './logged-stream.js';
import { SseStream } from './sse-stream.js';
import type { StreamServices } from './stream-context.js';
import type { StreamPositions } from './stream-ids.js';
import type { StreamRole } from './stream-registry.js';

/** How long a stream's leases last without a heartbeat (ms): three heartbeats, so one late beat is harmless. */
export function streamLeaseMs(services: StreamServices): number {
  return services.options.sseHeartbeatMs * 3;
}

/**
 * How long the leases of a tasks/result or direct-call stream last (ms): an hour, renewed every twenty
 * minutes (`HELD_REFRESH_MS`). The gateway process holds them (`HeldStreams`): when it dies, another one
 * releases them within `streamLeaseMs`, so they need not be renewed at every heartbeat.
 */
export const HELD_LEASE_MS = 60 * 60 * 1000;
const HELD_REFRESH_MS = 20 * 60 * 1000;

/** The lease of a stream of `role` (ms). */
export function leaseMsOf(services: StreamServices, role: StreamRole): number {
  return role === 'session' ? streamLeaseMs(services) : HELD_LEASE_MS;
}

/**
 * Starts the SSE response of a logged stream on `res`: headers out, tracked for shutdown under `role`, and
 * a heartbeat (the registry's, one timer per process) that keeps idle connections alive through proxies and
 * refreshes the stream's leases. A session's GET stream passes its `positions` (see `LoggedStream`).
 */
export function connectStream(
  services: StreamServices,
  res: ServerResponse,
  ids: { readonly streamId: string; readonly connectionId: string },
  role: StreamRole,
  logger: Logger,
  positions?: StreamPositions,
  primed = false,
): LoggedStream {
  // A primed stream's headers leave with its priming event, written right after this.
  const sse = new SseStream(res, { headersWithFirstEvent: primed });
  const stream =
    role === 'session'
      ? new LoggedStream(services.events, sse, ids, leaseMsOf(services, role), logger, positions)
      : adoptTaskConnection(services, sse, ids, logger);
  // Heartbeats from the registry's one timer; once the connection ends, shutdown waits for the clean-up.
  services.streams.add(sse, role);
  return stream;
}

/**
 * A tasks/result or direct-call stream on an SSE response that is open already (a quiet stream that now
 * has something to store): its leases are this process's (`HELD_LEASE_MS`, renewed every twenty minutes).
 */
export function adoptTaskConnection(
  services: StreamServices,
  sse: SseStream,
  ids: { readonly streamId: string; readonly connectionId: string },
  logger: Logger,
): LoggedStream {
  const stream = new LoggedStream(services.events, sse, ids, HELD_LEASE_MS, logger);
  stream.refreshLeasesEvery(HELD_REFRESH_MS / services.options.sseHeartbeatMs);
  return stream;
}

/**
 * The id of a task stream's priming event: "before the stream's first event". It is not logged (a logged
 * priming event costs an event-log append, about ten Redis commands, for every tasks/result that waits):
 * the stream's state exists from the start, `EventLog` numbers the first logged event 1, and a resumption
 * from ordinal 0 replays the log from its start, checks that nothing was trimmed (the next event must be
 * number 1), and answers 204 for a finished stream with nothing logged.
 */
export function beforeFirstEventId(streamId: string): string {
  return `${streamId}_0-0`;
}

/**
 * Like `connectStream` for a new tasks/result or direct-call stream, primed when `prime` with an id the
 * client can resume from whenever the connection ends (`beforeFirstEventId`), empty data and the `retry`
 * field (transport spec), written with the response headers. The stream's state must exist already.
 */
export function openTaskConnection(
  services: StreamServices,
  res: ServerResponse,
  ids: { readonly streamId: string; readonly connectionId: string },
  role: 'result' | 'direct',
  logger: Logger,
  prime: boolean,
): LoggedStream {
  const stream = connectStream(services, res, ids, role, logger, undefined, prime);
  if (prime) stream.sse.event(beforeFirstEventId(ids.streamId), '', services.options.sseRetryMs);
  return stream;
}
