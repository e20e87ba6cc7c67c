import { ErrorCode } from '@taskgate/protocol';
import type { Request } from 'express';
import { HttpError } from '../errors/http-error.js';

/** Who a request comes from: a principal when auth is on, nobody in particular when it is off. */
export interface Caller {
  readonly principal?: string;
}

/** Why authentication failed (for the audit log and metrics; never the token itself). */
export type AuthFailure = 'missing_token' | 'invalid_token' | 'insufficient_scope';

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
    super(reason === 'insufficient_scope' ? 403 : 401, ErrorCode.InvalidRequest, message, {
      'WWW-Authenticate': challenge,
    });
  }

  /** Stable string code: the reason, `MISSING_TOKEN`, `INVALID_TOKEN` or `INSUFFICIENT_SCOPE`. */
  override get code(): string {
    return this.reason.toUpperCase();
  }
}

/** The bearer token of a request (RFC 6750 header form only), or undefined. */
export function bearerToken(req: Request): string | undefined {
  const header = req.headers.authorization;
  const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  return match?.[1];
}
