import { ErrorCode, type RequestId } from '@taskgate/protocol';
import type { Response } from 'express';

/** Stable string codes of HTTP-level refusals, by status (for logs and tests; clients see status and rpcCode). */
const HTTP_ERROR_CODES: Readonly<Record<number, string>> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'SESSION_NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  406: 'NOT_ACCEPTABLE',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  410: 'EVENTS_EXPIRED',
  413: 'PAYLOAD_TOO_LARGE',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  429: 'TOO_MANY_REQUESTS',
  431: 'HEADERS_TOO_LARGE',
  500: 'INTERNAL',
  503: 'UNAVAILABLE',
};

/** The `Retry-After` (s) of a 503 while Redis does not answer: ioredis reconnects at least this often. */
const REDIS_RETRY_AFTER_S = 1;

/**
 * A refusal at the HTTP level (wrong headers, no session, too large, ...): an HTTP status plus a JSON-RPC error
 * as the body, whose `id` is the request's when it was read (see `rememberRequestId`), `null` otherwise.
 */
export class HttpError extends Error {
  override readonly name = 'HttpError';

  constructor(
    readonly status: number,
    readonly rpcCode: number,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
  }

  /** Stable string code of the refusal. */
  get code(): string {
    return HTTP_ERROR_CODES[this.status] ?? 'HTTP_REFUSED';
  }

  /** 400 with -32600. */
  static badRequest(message: string): HttpError {
    return new HttpError(400, ErrorCode.InvalidRequest, message);
  }

  /**
   * 503 with `Retry-After` for a request that needs Redis while Redis does not answer (down, frozen, loading):
   * nothing was changed that the client can see, so it may retry the same request.
   */
  static redisUnavailable(): HttpError {
    return new HttpError(
      503,
      ErrorCode.InternalError,
      'Service Unavailable: Redis does not answer; retry the request shortly',
      { 'Retry-After': String(REDIS_RETRY_AFTER_S) },
    );
  }

  /**
   * 503 with `Retry-After` for a request whose writes the Redis replicas did not confirm in time
   * (TASKGATE_REDIS_WAIT_REPLICAS). A create was not acknowledged and nothing of it remains; a cancel may or
   * may not stand (a retry answers which). Either way the client may retry.
   */
  static notReplicated(method: string | undefined): HttpError {
    const what =
      method === 'tools/call'
        ? 'the request in time; nothing was created'
        : method === 'tasks/cancel'
          ? 'the cancel in time; it may or may not stand'
          : 'the request in time';
    return new HttpError(
      503,
      ErrorCode.InternalError,
      `Service Unavailable: the Redis replicas did not confirm ${what}, retry it shortly`,
      { 'Retry-After': String(REDIS_RETRY_AFTER_S) },
    );
  }

  /** 404 for an unknown, ended or foreign session. */
  static sessionNotFound(): HttpError {
    return new HttpError(
      404,
      ErrorCode.SessionNotFound,
      'Session not found: it ended, expired or never existed. Send a new initialize request without Mcp-Session-Id.',
    );
  }
}

/**
 * Notes the id of the request a body carries, as soon as it could be read (even from a message that turns out
 * invalid): every refusal of the request from then on answers with it.
 */
export function rememberRequestId(res: Response, id: RequestId, method: unknown): void {
  res.locals.rpcId = id;
  if (typeof method === 'string') res.locals.rpcMethod = method;
}

/** The method of the request whose id was noted (`rememberRequestId`), if any. */
export function requestMethodOf(res: Response): string | undefined {
  const method: unknown = res.locals.rpcMethod;
  return typeof method === 'string' ? method : undefined;
}

/** The id a refusal of this request answers with: the request's when it was read, else `null` (JSON-RPC 2.0). */
function requestIdOf(res: Response): RequestId | null {
  const id: unknown = res.locals.rpcId;
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}

/** Writes an HttpError unless a response already started (then the connection is just ended). */
export function sendHttpError(res: Response, error: HttpError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  res
    .status(error.status)
    .set(error.headers)
    .json({ jsonrpc: '2.0', id: requestIdOf(res), error: { code: error.rpcCode, message: error.message } });
}
