import { ErrorCode } from '@taskgate/protocol';
import type { Request } from 'express';
import { HttpError } from '../messages/http-error.js';

/** Who a request comes from: a principal when auth is on, nobody in particular when it is off. */
export interface Caller {
  readonly principal?: string;
}

/** Why authentication failed (for the audit log and metrics; never the token itself). */
export type AuthFailure = 'missing_token' | 'invalid_token' | 'insufficient_scope' | 'invalid_request';

/** HTTP status of each failure: 400 for a malformed request (RFC 6750 `invalid_request`), 403 for scopes, else 401. */
const AUTH_FAILURE_STATUS: Readonly<Record<AuthFailure, number>> = {
  missing_token: 401,
  invalid_token: 401,
  insufficient_scope: 403,
  invalid_request: 400,
};

/** Turns a request into its caller, or throws an AuthError (401/403 with a `WWW-Authenticate` challenge). */
export interface Authenticator {
  authenticate(req: Request): Promise<Caller>;
}

/** A 401 (no or bad token) or 403 (token without the required scopes) refusal; `reason` goes to the audit log. */
export class AuthError extends HttpError {
  constructor(
    readonly reason: AuthFailure,
    message: string,
    challenge: string,
  ) {
    super(AUTH_FAILURE_STATUS[reason], ErrorCode.InvalidRequest, message, {
      'WWW-Authenticate': challenge,
    });
  }

  /** Stable string code: the reason, `MISSING_TOKEN`, `INVALID_TOKEN`, `INSUFFICIENT_SCOPE` or `INVALID_REQUEST`. */
  override get code(): string {
    return this.reason.toUpperCase();
  }
}

/**
 * True when the request's URL carries an `access_token` query parameter. MCP's authorization spec forbids
 * tokens in the query string (they end up in proxy and server logs): such a request is refused with 400
 * `invalid_request` (RFC 6750), whether or not it also has an Authorization header.
 */
export function hasQueryToken(req: Request): boolean {
  const url = req.originalUrl ?? req.url ?? '';
  const query = url.indexOf('?');
  return query >= 0 && new URLSearchParams(url.slice(query + 1)).has('access_token');
}

/** Message and challenge description of a refused query-string token. */
export const QUERY_TOKEN_MESSAGE = 'Bad Request: send the access token in the Authorization header, never in the URL';
export const QUERY_TOKEN_DESCRIPTION = 'Access tokens are accepted in the Authorization header only';

/** The bearer token of a request (RFC 6750 header form only), or undefined. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}
