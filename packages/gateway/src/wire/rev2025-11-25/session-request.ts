import { errorMessage, isRedisUnavailable, Keys, type Logger, type SessionRecord } from '@taskgate/core';
import {
  ErrorCode,
  isJsonRpcNotification,
  isJsonRpcRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  ProtocolError,
  toJsonRpcError,
} from '@taskgate/protocol';
import type { Request, Response } from 'express';
import type { Caller } from '../../auth/caller.js';
import { HttpError } from '../../messages/http-error.js';
import { errorResponse, resultMessage } from '../../messages/json-rpc.js';
import { onNotification, onResponse, type SessionMessage } from '../../methods/client-messages.js';
import type { TaskReadAhead } from '../../methods/context.js';
import { operationOf, retryAfterMsOf } from '../../ops/rate-limits.js';
import { streamLimitExceeded } from '../../ops/stream-quota.js';
import { describeError, describeReply, describeSession } from '../../ops/trace-request.js';
import { answerResult } from '../../streams/result-wait.js';
import type { SessionContext } from '../../streams/stream-context.js';
import { openTaskStream } from '../../streams/task-stream.js';
import type { GatewayServices } from '../services.js';
import { dispatch, type Reply, type SessionCall } from './dispatch.js';
import { initialize } from './initialize.js';
import { requestProtocolVersion } from './protocol-version.js';
import { requireSession } from './session.js';

/**
 * One message of revision 2025-11-25 on `POST /mcp`: `initialize` starts a session; every other message names
 * its session (Mcp-Session-Id). Requests are answered as JSON, or as an SSE stream when the answer has to wait
 * (tasks/result of a running task, a direct tool call); notifications and responses get 202.
 */
export async function handleSessionMessage(
  services: GatewayServices,
  req: Request,
  res: Response,
  caller: Caller,
  message: JsonRpcMessage,
  logger: Logger,
): Promise<void> {
  if (isJsonRpcRequest(message) && message.method === 'initialize') {
    return startSession(services, req, res, caller, message, logger);
  }
  requestProtocolVersion(req);
  const early = readAhead(services, req, caller, message);
  const { session, owner } = await requireSession(services, req, caller, logger);
  describeSession(session, owner);
  if (isJsonRpcRequest(message)) {
    return answer(services, requestContext(services, session, owner, caller.principal, logger, message, early), res);
  }
  const ctx: SessionMessage<GatewayServices> = { services, session, owner, logger };
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
  res.status(202).end();
}

/**
 * The context of one request. Built field by field: a spread copy got a hidden class of its own per request
 * in V8 (about 600 bytes each), and a blocked tasks/result keeps its context for as long as it waits.
 */
function requestContext(
  services: GatewayServices,
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
  services: GatewayServices,
  req: Request,
  caller: Caller,
  message: JsonRpcMessage,
): TaskReadAhead | undefined {
  if (!isJsonRpcRequest(message) || (message.method !== 'tasks/get' && message.method !== 'tasks/result')) {
    return undefined;
  }
  const taskId = (message.params as { taskId?: unknown } | undefined)?.taskId;
  const sessionId = req.headers['mcp-session-id'];
  if (typeof taskId !== 'string' || typeof sessionId !== 'string') return undefined;
  const owner = caller.principal ?? sessionId;
  const read =
    message.method === 'tasks/get'
      ? services.tasks.getOwned(owner, taskId).then((task) => ({ task }))
      : services.tasks.outcome(owner, taskId);
  // Awaited by the handler, or dropped with the request: never an unhandled rejection.
  read.catch(() => {});
  return { taskId, read };
}

/** A request's context without the request (see `requestContext`). */
function sessionContext(ctx: SessionCall): SessionContext {
  const { services, session, owner, principal, logger } = ctx;
  return principal === undefined
    ? { services, session, owner, logger }
    : { services, session, owner, principal, logger };
}

async function startSession(
  services: GatewayServices,
  req: Request,
  res: Response,
  caller: Caller,
  request: JsonRpcRequest,
  logger: Logger,
): Promise<void> {
  if (req.headers['mcp-session-id'] !== undefined) {
    throw HttpError.badRequest('Bad Request: initialize starts a new session; send it without Mcp-Session-Id');
  }
  const started = performance.now();
  try {
    const { result, sessionId } = await initialize(services, caller, request);
    services.metrics.sessionCreated();
    services.metrics.rpcRequest('initialize', (performance.now() - started) / 1000);
    logger.info(
      { audit: 'session.created', session: Keys.digest(sessionId).slice(0, 12), principal: caller.principal },
      'session created',
    );
    res.set('Mcp-Session-Id', sessionId).json(resultMessage(request.id, result));
  } catch (error) {
    if (!(error instanceof ProtocolError)) throw error;
    services.metrics.rpcRequest('initialize', (performance.now() - started) / 1000, error.code);
    describeError(error.code);
    res.json(errorResponse(request.id, error.toJSON()));
  }
}

/**
 * Runs a request and writes its answer: JSON, or an SSE stream that ends with the response. The caller's
 * rate limit for the method's operation class is spent first (SEC-3).
 */
async function answer(services: GatewayServices, ctx: SessionCall, res: Response): Promise<void> {
  const { id, method } = ctx.request;
  const { metrics, rateLimits } = services;
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  let reply: Reply;
  let release: (() => void) | undefined;
  try {
    const operation = operationOf(method);
    if (operation !== undefined) await rateLimits.consume(operation, ctx.owner, ctx.logger);
    // A place among the owner's open streams is taken before a call that may answer as a stream starts (a
    // direct call refused afterwards would run with nobody to answer).
    if (mayStream(ctx.request)) release = takeStreamPlace(services, ctx);
    reply = await dispatch(ctx);
  } catch (error) {
    release?.();
    // The HTTP layer answers 503 + Retry-After, as for every request while Redis does not answer.
    if (isRedisUnavailable(error)) {
      metrics.rpcRequest(method, seconds(), ErrorCode.InternalError);
      throw error;
    }
    logFailure(ctx, error);
    const rpcError = toJsonRpcError(error);
    describeError(rpcError.code);
    metrics.rpcRequest(method, seconds(), rpcError.code);
    const retryAfterMs = retryAfterMsOf(error);
    if (retryAfterMs !== undefined) res.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    res.json(errorResponse(id, rpcError));
    return;
  }
  metrics.rpcRequest(method, seconds());
  describeReply(reply);
  if (reply.kind === 'result') {
    release?.();
    res.json(resultMessage(id, reply.result));
    return;
  }
  if (release !== undefined) {
    if (res.destroyed) release();
    // The release is idempotent: `on` spares the wrapper `once` makes for every waiting request.
    else res.on('close', release);
  }
  const { task } = reply;
  // The stream may wait for hours: it keeps the session's context, not the request's.
  const target = { kind: reply.role, taskId: task.taskId, rpcId: id, task };
  // tasks/result waits in the process first: a task that ends soon is answered as JSON, with no stream.
  const answered = reply.role === 'result' ? answerResult(sessionContext(ctx), res, target) : undefined;
  return metrics.waiting(answered ?? openTaskStream(sessionContext(ctx), res, target));
}

/** True for the requests whose answer may be an SSE stream: `tasks/result`, and `tools/call` without `task`. */
function mayStream(request: JsonRpcRequest): boolean {
  if (request.method === 'tasks/result') return true;
  return request.method === 'tools/call' && (request.params as { task?: unknown } | undefined)?.task === undefined;
}

/** One of the owner's open-stream places on this gateway, or -32012 when all are taken. */
function takeStreamPlace(services: GatewayServices, ctx: SessionCall): () => void {
  const { streamQuota } = services;
  const release = streamQuota.take(ctx.owner);
  if (release !== undefined) return release;
  ctx.logger.warn(
    { audit: 'stream_limited', owner: Keys.ownerId(ctx.owner), limit: streamQuota.max },
    'too many open streams',
  );
  throw streamLimitExceeded(streamQuota.max);
}

function logFailure(ctx: SessionCall, error: unknown): void {
  if (error instanceof ProtocolError) {
    ctx.logger.debug({ code: error.code, reason: error.message }, 'request refused');
  } else {
    ctx.logger.error({ err: errorMessage(error) }, 'request failed');
  }
}
