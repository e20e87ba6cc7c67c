import { createHash, timingSafeEqual } from 'node:crypto';
import { ErrorCode } from '@taskgate/protocol';
import type { Request } from 'express';
import { type AuthOptions, tokenEntries } from '../options.js';
import { HttpError } from './http-error.js';

/** Who a request comes from: a principal when auth is on, nobody in particular when it is off. */
export interface Caller {
  readonly principal?: string;
}

/** Why authentication failed (for the audit log; never the token itself). */
export type AuthFailure = 'missing_token' | 'invalid_token';

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Bearer-token authentication. Tokens are kept only as SHA-256 digests and a presented token is compared with
 * every known one in constant time, so neither timing nor memory dumps reveal them.
 */
export class Authenticator {
  readonly #mode: AuthOptions['mode'];
  readonly #digests: { digest: Buffer; principal: string }[];
  readonly #realm: string;

  constructor(auth: AuthOptions) {
    this.#mode = auth.mode;
    this.#digests =
      auth.mode === 'tokens'
        ? tokenEntries(auth.tokens).map(([token, principal]) => ({ digest: sha256(token), principal }))
        : [];
    this.#realm = auth.mode === 'tokens' ? (auth.realm ?? 'taskgate') : 'taskgate';
  }

  /** The caller of a request, or a 401 HttpError carrying a `WWW-Authenticate` challenge. */
  authenticate(req: Request): Caller {
    if (this.#mode === 'none') return {};
    const header = req.headers.authorization;
    const match = header === undefined ? null : /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
    if (match?.[1] === undefined) throw this.#unauthorized('missing_token');
    const presented = sha256(match[1]);
    let principal: string | undefined;
    for (const entry of this.#digests) {
      // No early exit: every comparison runs whatever matched.
      if (timingSafeEqual(entry.digest, presented)) principal ??= entry.principal;
    }
    if (principal === undefined) throw this.#unauthorized('invalid_token');
    return { principal };
  }

  #unauthorized(reason: AuthFailure): AuthError {
    const challenge =
      reason === 'missing_token'
        ? `Bearer realm="${this.#realm}"`
        : `Bearer realm="${this.#realm}", error="invalid_token", error_description="The bearer token is not valid"`;
    const message =
      reason === 'missing_token'
        ? 'Unauthorized: send Authorization: Bearer <token>'
        : 'Unauthorized: the bearer token is not valid';
    return new AuthError(reason, message, challenge);
  }
}

/** A 401 refusal; `reason` goes to the audit log. */
export class AuthError extends HttpError {
  constructor(
    readonly reason: AuthFailure,
    message: string,
    challenge: string,
  ) {
    super(401, ErrorCode.InvalidRequest, message, { 'WWW-Authenticate': challenge });
  }
}
