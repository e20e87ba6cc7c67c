import { errorMessage, isRedisUnavailable, Keys, type Logger } from '@taskgate/core';
import {
  ErrorCode,
  isJsonRpcNotification,
  isJsonRpcRequest,
  type JsonRpcMessage,
  type JsonRpcRequest,
  ProtocolError,
  parseJsonRpcMessage,
  SUPPORTED_PROTOCOL_VERSIONS,
  toJsonRpcError,
} from '@taskgate/protocol';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Caller } from '../auth/caller.js';
import { HttpError } from '../messages/http-error.js';
import { errorResponse, resultMessage } from '../messages/json-rpc.js';
import { onNotification, onResponse } from '../methods/client-messages.js';
import type { RpcContext, CallerContext as SessionContext, TaskReadAhead } from '../methods/context.js';
import { operationOf, retryAfterMsOf } from '../ops/rate-limits.js';
import { streamLimitExceeded } from '../ops/stream-quota.js';
import { openTaskStream } from '../streams/task-stream.js';
import { dispatch } from '../wire/rev2025-11-25/dispatch.js';
import { initialize } from '../wire/rev2025-11-25/initialize.js';
import { isStatelessMessage } from '../wire/rev2026-07-28/envelope.js';
import { handleStateless } from '../wire/rev2026-07-28/handle.js';
import type { GatewayServices } from '../wire/services.js';
import { requestProtocolVersion, requireAccept, requireJsonContentType, requireShallowJson } from './guards.js';
import { requireSession } from './session.js';
import { describeError, describeMessage, describeReply, describeSession } from './trace-request.js';

/** Runs an express middleware as a promise (the body reader), rejecting with what it passes to `next`. */
function run(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
}

/** Maps a body-reader failure to the status Streamable HTTP clients expect. */
function bodyError(error: unknown, limit: number): HttpError {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    return new HttpError(413, ErrorCode.InvalidRequest, `Payload Too Large: the body exceeds ${limit} bytes`);
  }
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new HttpError(
      415,
      ErrorCode.InvalidRequest,
      'Unsupported Media Type: send UTF-8 JSON without content encoding',
    );
  }
  return new HttpError(400, ErrorCode.ParseError, 'Parse error: the body could not be read');
}

/** One JSON-RPC message from a body: -32700 for anything but JSON, -32600 for JSON that is not a message. */
function parseBody(raw: unknown): JsonRpcMessage {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new HttpError(400, ErrorCode.ParseError, 'Parse error: the body is empty; send one JSON-RPC message');
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new HttpError(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
  }
  requireShallowJson(value);
  try {
    return parseJsonRpcMessage(value);
  } catch (error) {
    if (error instanceof ProtocolError) throw new HttpError(400, error.code, error.message);
    throw error;
  }
}

/**
 * `POST /mcp`: one JSON-RPC message per request. Requests are answered as JSON, or as an SSE stream when the
 * answer has to wait (tasks/result of a running task, a direct tool call); notifications and responses get 202.
 */
export function postHandler(services: GatewayServices) {
  const readBody = express.text({
    type: () => true,
    limit: services.options.bodyLimitBytes,
    defaultCharset: 'utf-8',
  });
  return async (req: Request, res: Response, caller: Caller, logger: Logger): Promise<void> => {
    requireAccept(req, ['application/json', 'text/event-stream']);
    requireJsonContentType(req);
    await run(readBody, req, res).catch((error: unknown) => {
      throw bodyError(error, services.options.bodyLimitBytes);
    });
    const message = parseBody(req.body);
    describeMessage(message);
    // Revision 2026-07-28: no session, what initialize negotiated travels in each request's _meta.
    if (isStatelessMessage(req, message, SUPPORTED_PROTOCOL_VERSIONS)) {
      return handleStateless(services, req, res, caller, message, logger);
    }

    if (isJsonRpcRequest(message) && message.method === 'initialize') {
      return startSession(services, req, res, caller, message, logger);
    }
    requestProtocolVersion(req);
    const early = readAhead(services, req, caller, message);
    const { session, owner } = await requireSession(services, req, caller, logger);
    describeSession(session, owner);
    const ctx: SessionContext = {
      services,
      session,
      owner,
      ...(caller.principal !== undefined && { principal: caller.principal }),
      logger,
    };
    if (isJsonRpcRequest(message)) return answer(services, requestContext(ctx, message, early), res);
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
  };
}

/**
 * The context of one request. Built field by field: a spread copy got a hidden class of its own per request
 * in V8 (about 600 bytes each), and a blocked tasks/result keeps its context for as long as it waits.
 */
function requestContext(ctx: SessionContext, request: JsonRpcRequest, readAhead?: TaskReadAhead): RpcContext {
  const { services, session, owner, principal } = ctx;
  const logger = ctx.logger.child({ rpc: request.method });
  const context: RpcContext =
    principal === undefined
      ? { services, session, owner, logger, request }
      : { services, session, owner, principal, logger, request };
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
function sessionContext(ctx: RpcContext): SessionContext {
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
async function answer(services: GatewayServices, ctx: RpcContext, res: Response): Promise<void> {
  const { id, method } = ctx.request;
  const { metrics, rateLimits } = services;
  const started = performance.now();
  const seconds = (): number => (performance.now() - started) / 1000;
  let reply: Awaited<ReturnType<typeof dispatch>>;
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
    else res.once('close', release);
  }
  const { task } = reply;
  // The stream may wait for hours: it keeps the session's context, not the request's.
  const target = { kind: reply.role, taskId: reply.taskId, rpcId: id, ...(task !== undefined && { task }) };
  return metrics.waiting(openTaskStream(sessionContext(ctx), res, target));
}

/** True for the requests whose answer may be an SSE stream: `tasks/result`, and `tools/call` without `task`. */
function mayStream(request: JsonRpcRequest): boolean {
  if (request.method === 'tasks/result') return true;
  return request.method === 'tools/call' && (request.params as { task?: unknown } | undefined)?.task === undefined;
}

/** One of the owner's open-stream places on this gateway, or -32012 when all are taken. */
function takeStreamPlace(services: GatewayServices, ctx: RpcContext): () => void {
  const { streamQuota } = services;
  const release = streamQuota.take(ctx.owner);
  if (release !== undefined) return release;
  ctx.logger.warn(
    { audit: 'stream_limited', owner: Keys.ownerId(ctx.owner), limit: streamQuota.max },
    'too many open streams',
  );
  throw streamLimitExceeded(streamQuota.max);
}

function logFailure(ctx: RpcContext, error: unknown): void {
  if (error instanceof ProtocolError) {
    ctx.logger.debug({ code: error.code, reason: error.message }, 'request refused');
  } else {
    ctx.logger.error({ err: errorMessage(error) }, 'request failed');
  }
}
