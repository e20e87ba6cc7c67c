import { isRedisUnavailable, type Logger } from '@taskgate/core';
import {
  ErrorCode,
  isJsonRpcRequest,
  type JsonRpcMessage,
  ProtocolError,
  STATELESS_PROTOCOL_VERSION,
  toJsonRpcError,
} from '@taskgate/protocol';
import type { Request, Response } from 'express';
import type { Caller } from '../../auth/caller.js';
import { operationOf, retryAfterMsOf } from '../../ops/rate-limits.js';
import type { GatewayServices } from '../services.js';
import { anonymousOwner, type StatelessContext } from './context.js';
import { answersMethod, dispatchStateless } from './dispatch.js';
import { checkEnvelope, WireRefusal } from './envelope.js';
import { listen } from './listen.js';
import { StatelessAnswer } from './notices.js';
import { paramHeaders } from './param-headers.js';

/** The HTTP status of a JSON-RPC error on this wire. */
function statusOf(code: number): number {
  if (code === ErrorCode.MethodNotFound) return 404;
  if (
    code === ErrorCode.HeaderMismatch ||
    code === ErrorCode.MissingClientCapability ||
    code === ErrorCode.UnsupportedProtocolVersion
  ) {
    return 400;
  }
  return 200;
}

function paramsOf(message: JsonRpcMessage): Record<string, unknown> {
  const params = (message as { params?: unknown }).params;
  return typeof params === 'object' && params !== null && !Array.isArray(params)
    ? (params as Record<string, unknown>)
    : {};
}

/**
 * One message of revision 2026-07-28 on `POST /mcp`: no session; the request's `_meta` carries what
 * `initialize` negotiated on 2025-11-25. The envelope is checked first (headers against the body), then the
 * method runs with the caller's principal as owner (auth on) or a fresh anonymous owner (auth off). Errors keep
 * the request's id; those the revision gives an HTTP status answer with it (400, 404).
 */
export async function handleStateless(
  services: GatewayServices,
  req: Request,
  res: Response,
  caller: Caller,
  message: JsonRpcMessage,
  logger: Logger,
): Promise<void> {
  if (!isJsonRpcRequest(message)) {
    res.status(202).end();
    return;
  }
  const { id, method } = message;
  const params = paramsOf(message);
  const started = performance.now();
  const answer = new StatelessAnswer(services, res);
  const reply = (status: number, body: Record<string, unknown>): void => answer.finish(status, body);
  try {
    const meta = checkEnvelope(req, method, params);
    if (method !== 'subscriptions/listen' && !answersMethod(method)) {
      throw ProtocolError.methodNotFound(`Method not found: ${method} (revision ${STATELESS_PROTOCOL_VERSION})`);
    }
    const owner = caller.principal ?? anonymousOwner();
    const session = {
      sessionId: '',
      protocolVersion: meta.protocolVersion,
      clientCapabilities: meta.clientCapabilities,
      ...(meta.clientInfo !== undefined && { clientInfo: meta.clientInfo }),
      createdAt: 0,
    };
    const ctx: StatelessContext = {
      services,
      session,
      owner,
      ...(caller.principal !== undefined && { principal: caller.principal }),
      logger: logger.child({ rpc: method, wire: STATELESS_PROTOCOL_VERSION }),
      request: message,
      // With auth off a task is found by its unguessable id; with auth on, it is the principal's.
      tasksBy: caller.principal === undefined ? 'id' : 'record',
      stamp: STATELESS_PROTOCOL_VERSION,
      inlineInput: true,
      meta,
      anonymous: caller.principal === undefined,
      answer,
      params: paramHeaders(req.headers),
    };
    const operation = operationOf(method);
    if (operation !== undefined) await services.rateLimits.consume(operation, owner, ctx.logger);
    if (method === 'subscriptions/listen') return await listen(ctx, res, id, params);
    const aborted = new AbortController();
    res.once('close', () => {
      if (!res.writableFinished) aborted.abort();
    });
    const result = await dispatchStateless(ctx, params, aborted.signal);
    services.metrics.rpcRequest(method, (performance.now() - started) / 1000);
    reply(200, { jsonrpc: '2.0', id, result });
  } catch (error) {
    if (isRedisUnavailable(error)) throw error;
    if (error instanceof WireRefusal) {
      services.metrics.rpcRequest(method, (performance.now() - started) / 1000, error.code);
      logger.debug({ code: error.code, reason: error.message }, 'stateless request refused');
      const body = { code: error.code, message: error.message, ...(error.data !== undefined && { data: error.data }) };
      reply(error.status, { jsonrpc: '2.0', id, error: body });
      return;
    }
    if (!(error instanceof ProtocolError)) {
      logger.error({ err: error instanceof Error ? error.message : String(error) }, 'stateless request failed');
    }
    const rpcError = toJsonRpcError(error);
    services.metrics.rpcRequest(method, (performance.now() - started) / 1000, rpcError.code);
    const retryAfterMs = retryAfterMsOf(error);
    if (retryAfterMs !== undefined) res.set('Retry-After', String(Math.max(1, Math.ceil(retryAfterMs / 1000))));
    reply(statusOf(rpcError.code), { jsonrpc: '2.0', id, error: rpcError });
  }
}
