import { ErrorCode } from '@taskgate/protocol';
import type { Response } from 'express';

/** Server-defined JSON-RPC codes of transport-level refusals. */
export const TransportErrorCode = {
  /** The Mcp-Session-Id is unknown, ended, or another principal's (HTTP 404). */
  SessionNotFound: -32001,
} as const;

/**
 * A refusal at the HTTP level (wrong headers, no session, too large, ...): an HTTP status plus a JSON-RPC error
 * without an id as the body, as Streamable HTTP allows.
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

  /** 400 with -32600. */
  static badRequest(message: string): HttpError {
    return new HttpError(400, ErrorCode.InvalidRequest, message);
  }

  /** 404 for an unknown, ended or foreign session. */
  static sessionNotFound(): HttpError {
    return new HttpError(
      404,
      TransportErrorCode.SessionNotFound,
      'Session not found: it ended, expired or never existed. Send a new initialize request without Mcp-Session-Id.',
    );
  }
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
    .json({ jsonrpc: '2.0', error: { code: error.rpcCode, message: error.message } });
}
