import { randomBytes } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { recordFromFields, SESSION_ENDED, type SessionRecord, toTask } from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import { HttpError } from '../http/http-error.js';
import type { Logger } from '../logger.js';
import type { GatewayServices } from '../rpc/context.js';
import { SseStream } from './sse-stream.js';

/**
 * The session's GET stream: `notifications/tasks/status` for the tasks the session created (NTF-1; the Task
 * as params, no related-task `_meta`, NTF-3) and `notifications/tools/list_changed`. A lease in Redis keeps
 * it to one open stream per session across all gateways, so no message goes out twice.
 */
export async function openSessionStream(
  services: GatewayServices,
  res: ServerResponse,
  session: SessionRecord,
  logger: Logger,
): Promise<void> {
  const { sessions, bus, keys, options } = services;
  const { sessionId } = session;
  const streamId = randomBytes(12).toString('base64url');
  const leaseMs = options.sseHeartbeatMs * 3;
  const claimed = await sessions.claimStream(sessionId, streamId, leaseMs);
  if (claimed === 'session_gone') throw HttpError.sessionNotFound();
  if (claimed === 'held_elsewhere') {
    throw new HttpError(409, ErrorCode.InvalidRequest, 'Conflict: this session already has an open GET stream');
  }

  const stream: SseStream = new SseStream(res, {
    heartbeatMs: options.sseHeartbeatMs,
    onHeartbeat: () => {
      sessions.refreshStream(sessionId, streamId, leaseMs).then(
        (result) => {
          if (result !== 'ok') stream.end();
        },
        () => {},
      );
    },
  });
  services.streams.add(stream, 'session');
  logger.debug({ stream: streamId }, 'session stream opened');

  const onTaskChange = (message: string): void => {
    if (message === SESSION_ENDED) {
      stream.end();
      return;
    }
    try {
      const fields = JSON.parse(message) as Record<string, string> & { taskId: string };
      if (fields.kind === 'direct') return;
      stream.send({
        jsonrpc: '2.0',
        method: 'notifications/tasks/status',
        params: toTask(recordFromFields(fields.taskId, fields)),
      });
    } catch (error) {
      logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'unreadable task snapshot');
    }
  };
  const onToolsChange = (): void => {
    stream.send({ jsonrpc: '2.0', method: 'notifications/tools/list_changed' });
  };

  const unsubscribes: (() => Promise<void>)[] = [];
  const cleanup = (): void => {
    for (const unsubscribe of unsubscribes.splice(0)) void unsubscribe();
    void sessions.releaseStream(sessionId, streamId).catch(() => {});
    logger.debug({ stream: streamId }, 'session stream closed');
  };
  stream.signal.addEventListener('abort', cleanup, { once: true });
  try {
    unsubscribes.push(await bus.subscribe(keys.sessionChannel(sessionId), onTaskChange));
    unsubscribes.push(await bus.subscribe(keys.toolsChannel(), onToolsChange));
  } catch {
    stream.end();
  }
  // The client may have gone while we subscribed.
  if (stream.signal.aborted) for (const unsubscribe of unsubscribes.splice(0)) void unsubscribe();
}
