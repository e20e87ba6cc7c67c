import type { ServerResponse } from 'node:http';
import type { Logger } from '@taskgate/core';
import type { GatewayServices } from '../rpc/context.js';
import { LoggedStream } from './logged-stream.js';
import { SseStream } from './sse-stream.js';
import type { StreamRole } from './stream-registry.js';

/** How long a stream's leases last without a heartbeat (ms): three heartbeats, so one late beat is harmless. */
export function streamLeaseMs(services: GatewayServices): number {
  return services.options.sseHeartbeatMs * 3;
}

/**
 * Starts the SSE response of a logged stream on `res`: headers out, tracked for shutdown under `role`, and
 * a heartbeat that keeps idle connections alive through proxies and refreshes the stream's leases.
 */
export function connectStream(
  services: GatewayServices,
  res: ServerResponse,
  ids: { readonly streamId: string; readonly connectionId: string },
  role: StreamRole,
  logger: Logger,
): LoggedStream {
  let stream: LoggedStream | undefined;
  const sse = new SseStream(res, {
    heartbeatMs: services.options.sseHeartbeatMs,
    onHeartbeat: () => void stream?.heartbeat(),
  });
  stream = new LoggedStream(services.events, sse, ids, streamLeaseMs(services), logger);
  services.streams.add(sse, role);
  services.streams.track(stream.closed());
  return stream;
}

/**
 * Like `connectStream` for a new stream, primed when `prime`: the priming event (an id, empty data, the
 * `retry` field; transport spec) is logged before the response starts and written with its headers, so
 * the client holds an id to resume from whenever the connection ends.
 */
export async function openLoggedStream(
  services: GatewayServices,
  res: ServerResponse,
  ids: { readonly streamId: string; readonly connectionId: string },
  role: StreamRole,
  logger: Logger,
  prime: boolean,
): Promise<LoggedStream> {
  const priming = prime ? await services.events.append(ids.streamId, ids.connectionId, '') : undefined;
  const stream = connectStream(services, res, ids, role, logger);
  if (priming !== undefined) stream.sse.event(priming, '', services.options.sseRetryMs);
  return stream;
}
