import { Keys, type Logger, type SessionRecord } from '@taskgate/core';
import {
  ErrorCode,
  isJsonRpcNotification,
  type JsonRpcMessage,
  type JsonRpcRequest,
  ProtocolError,
} from '@taskgate/protocol';
import type { Caller } from '../../auth/caller.js';
import { HttpError } from '../../messages/http-error.js';
import { onNotification, onResponse, type SessionMessage } from '../../methods/client-messages.js';
import type { TaskReadAhead } from '../../methods/context.js';
import { describeSession } from '../../ops/trace-request.js';
import type { SessionContext } from '../../streams/stream-context.js';
import type { Revision, WireHeaders, WireMessage, WireRequest } from '../codec.js';
import { decode, errorStatus } from './codec.js';
import { dispatch, type SessionCall, type SessionServices } from './dispatch.js';
import { initialize } from './initialize.js';
import { requestProtocolVersion } from './protocol-version.js';
import { findSession, requireSession } from './session.js';

/**
 * Revision 2025-11-25 on `POST /mcp`: `initialize` starts a session; every other message names its session
 * (Mcp-Session-Id). Requests are answered as JSON, or as an SSE stream when the answer has to wait
 * (tasks/result of a running task, a direct tool call); notifications and responses get 202. A JSON-RPC error
 * is HTTP 200; a refusal before the session is known is an HTTP error.
 */
export const rev20251125: Revision<SessionServices> = {
  errorStatus,
  accept: acceptMessage,
  open: openRequest,
};

async function acceptMessage(
  services: SessionServices,
  headers: WireHeaders,
  caller: Caller,
  message: JsonRpcMessage,
  logger: Logger,
): Promise<void> {
  requestProtocolVersion(headers);
  const { session, owner } = await requireSession(services, headers, caller, logger);
  describeSession(session, owner);
  const ctx: SessionMessage<SessionServices> = { services, session, owner, logger };
  if (isJsonRpcNotification(message)) {
    try {
      await onNotification(ctx, message);
    } catch (error) {
      if (error instanceof ProtocolError) throw new HttpError(400, error.code, error.message);
      throw error;
    }
  } else if (!(await onResponse(ctx, message))) {
    throw new HttpError(400, ErrorCode.InvalidParams, 'Bad Request: no pending request of this session has that id');
  }
}

async function openRequest(
  services: SessionServices,
  headers: WireHeaders,
  caller: Caller,
  request: JsonRpcRequest,
  logger: Logger,
): Promise<WireRequest> {
  const { sessionId } = decode(headers, request);
  if (sessionId === undefined) return startSession(services, caller, request, logger);
  const early = readAhead(services, sessionId, caller, request);
  const { session, owner } = await findSession(services, sessionId, caller, logger);
  describeSession(session, owner);
  const ctx = requestContext(services, session, owner, caller.principal, logger, request, early);
  return {
    id: request.id,
    method: request.method,
    owner,
    logger: ctx.logger,
    mayStream: mayStream(request),
    run: async (): Promise<WireMessage> => {
      const answer = await dispatch(ctx);
      return answer.kind === 'result' ? answer : { ...answer, session: sessionContext(ctx) };
    },
  };
}

/**
 * The context of one request. Built field by field: a spread copy got a hidden class of its own per request
 * in V8 (about 600 bytes each), and a blocked tasks/result keeps its context for as long as it waits.
 */
function requestContext(
  services: SessionServices,
  session: SessionRecord,
  owner: string,
  principal: string | undefined,
  parent: Logger,
  request: JsonRpcRequest,
  readAhead?: TaskReadAhead,
): SessionCall {
  const logger = parent.child({ rpc: request.method });
  const sessionId = session.sessionId;
  const context: SessionCall =
    principal === undefined
      ? { services, session, owner, logger, request, tasksBy: 'owner', sessionId, inlineInput: false }
      : { services, session, owner, principal, logger, request, tasksBy: 'owner', sessionId, inlineInput: false };
  return readAhead === undefined ? context : { ...context, readAhead };
}

/**
 * `tasks/get` and `tasks/result` read one task of the caller. The owner is known before the session is
 * read (the principal, or the session id the request names), so the task's read leaves together with the
 * session's: one Redis round trip for both. It counts only once the session is checked; the read of a
 * request whose session turns out unknown is dropped (it changes nothing).
 */
function readAhead(
  services: SessionServices,
  sessionId: string,
  caller: Caller,
  request: JsonRpcRequest,
): TaskReadAhead | undefined {
  if (request.method !== 'tasks/get' && request.method !== 'tasks/result') return undefined;
  const taskId = (request.params as { taskId?: unknown } | undefined)?.taskId;
  if (typeof taskId !== 'string') return undefined;
  const owner = caller.principal ?? sessionId;
  const read =
    request.method === 'tasks/get'
      ? services.tasks.getOwned(owner, taskId).then((task) => ({ task }))
      : services.tasks.outcome(owner, taskId);
  // Awaited by the handler, or dropped with the request: never an unhandled rejection.
  read.catch(() => {});
  return { taskId, read };
}

/** A request's context without the request (see `requestContext`). */
function sessionContext(ctx: SessionCall): SessionContext {
  const { services, owner, principal, logger } = ctx;
  // What the stream uses of the record: a waiting stream does not keep the client's capabilities and info.
  const { sessionId, protocolVersion, principalId } = ctx.session;
  const session =
    principalId === undefined ? { sessionId, protocolVersion } : { sessionId, protocolVersion, principalId };
  return principal === undefined
    ? { services, session, owner, logger }
    : { services, session, owner, principal, logger };
}

/** `initialize`: a new session, its id in the answer's Mcp-Session-Id header. */
function startSession(services: SessionServices, caller: Caller, request: JsonRpcRequest, logger: Logger): WireRequest {
  return {
    id: request.id,
    method: request.method,
    owner: caller.principal ?? '',
    logger,
    mayStream: false,
    run: async () => {
      const { result, sessionId } = await initialize(services, caller, request);
      services.metrics.sessionCreated();
      logger.info(
        { audit: 'session.created', session: Keys.digest(sessionId).slice(0, 12), principal: caller.principal },
        'session created',
      );
      return { kind: 'result', result, sessionId };
    },
  };
}

/** True for the requests whose answer may be an SSE stream: `tasks/result`, and `tools/call` without `task`. */
function mayStream(request: JsonRpcRequest): boolean {
  if (request.method === 'tasks/result') return true;
  return request.method === 'tools/call' && (request.params as { task?: unknown } | undefined)?.task === undefined;
}
