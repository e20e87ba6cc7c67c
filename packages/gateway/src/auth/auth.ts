import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request } from 'express';
import { type AuthOptions, tokenEntries } from '../options.js';
import {
  AuthError,
  type Authenticator,
  bearerToken,
  type Caller,
  hasQueryToken,
  QUERY_TOKEN_DESCRIPTION,
  QUERY_TOKEN_MESSAGE,
} from './caller.js';
import { JwtAuthenticator } from './jwt-auth.js';

/** The authenticator for the configured mode; `path` is the MCP endpoint's (for resource metadata URLs). */
export function createAuthenticator(auth: AuthOptions, path: string): Authenticator {
  switch (auth.mode) {
    case 'none':
      return { authenticate: async () => ({}) };
    case 'tokens':
      return new TokenAuthenticator(auth.tokens, auth.realm ?? 'taskgate');
    case 'jwt':
      return new JwtAuthenticator(auth, path);
  }
}

const sha256 = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/**
 * Static bearer tokens. Tokens are kept only as SHA-256 digests and a presented token is compared with every
 * known one in constant time, so neither timing nor memory dumps reveal them.
 */
class TokenAuthenticator implements Authenticator {
  readonly #digests: { digest: Buffer; principal: string }[];
  readonly #realm: string;

  constructor(tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>, realm: string) {
    this.#digests = tokenEntries(tokens).map(([token, principal]) => ({ digest: sha256(token), principal }));
    this.#realm = realm;
  }

  async authenticate(req: Request): Promise<Caller> {
    if (hasQueryToken(req)) {
      throw new AuthError(
        'invalid_request',
        QUERY_TOKEN_MESSAGE,
        `Bearer realm="${this.#realm}", error="invalid_request", error_description="${QUERY_TOKEN_DESCRIPTION}"`,
      );
    }
    const token = bearerToken(req);
    if (token === undefined) {
      throw new AuthError(
        'missing_token',
        'Unauthorized: send Authorization: Bearer <token>',
        `Bearer realm="${this.#realm}"`,
      );
    }
    const presented = sha256(token);
    let principal: string | undefined;
    for (const entry of this.#digests) {
      // No early exit: every comparison runs whatever matched.
      if (timingSafeEqual(entry.digest, presented)) principal ??= entry.principal;
    }
    if (principal === undefined) {
      throw new AuthError(
        'invalid_token',
        'Unauthorized: the bearer token is not valid',
        `Bearer realm="${this.#realm}", error="invalid_token", error_description="The bearer token is not valid"`,
      );
    }
    return { principal };
  }
}
