import { ErrorCode } from '@taskgate/protocol';
import type { Request } from 'express';
import { createLocalJWKSet, createRemoteJWKSet, type JWTPayload, errors as joseErrors, jwtVerify } from 'jose';
import { HttpError } from '../messages/http-error.js';
import type { JwtAuthOptions } from '../options.js';
import {
  AuthError,
  type Authenticator,
  bearerToken,
  type Caller,
  hasQueryToken,
  QUERY_TOKEN_DESCRIPTION,
  QUERY_TOKEN_MESSAGE,
} from './caller.js';
import { resourceMetadataUrl, resourceUrl } from './protected-resource.js';

type KeySet = ReturnType<typeof createLocalJWKSet> | ReturnType<typeof createRemoteJWKSet>;

/** The scopes a token grants: OAuth's space-separated `scope`, or an `scp` array (Azure AD, Okta). */
export function grantedScopes(payload: JWTPayload): Set<string> {
  const scopes = new Set<string>();
  if (typeof payload.scope === 'string') for (const scope of payload.scope.split(' ')) if (scope) scopes.add(scope);
  const scp = payload.scp;
  if (Array.isArray(scp)) for (const scope of scp) if (typeof scope === 'string') scopes.add(scope);
  if (typeof scp === 'string') for (const scope of scp.split(' ')) if (scope) scopes.add(scope);
  return scopes;
}

/** A quoted-string for an auth-param (RFC 9110): backslash and double quote escaped. */
const quoted = (value: string): string => `"${value.replace(/["\\]/g, '\\$&')}"`;

/**
 * JWT access tokens (MCP authorization, RFC 6750, RFC 9068): signature from the JWKS, `iss`, `aud`, `exp`/`nbf`,
 * then the required scopes. Challenges carry `resource_metadata` (RFC 9728) and `scope`, so a client can
 * discover the authorization server and ask for the right scopes.
 */
export class JwtAuthenticator implements Authenticator {
  readonly #options: JwtAuthOptions;
  readonly #path: string;
  readonly #keys: KeySet;
  readonly #required: readonly string[];

  constructor(options: JwtAuthOptions, path: string) {
    this.#options = options;
    this.#path = path;
    this.#required = options.requiredScopes ?? [];
    this.#keys =
      options.jwks instanceof URL
        ? createRemoteJWKSet(options.jwks, { timeoutDuration: 5000, cooldownDuration: 30_000, cacheMaxAge: 600_000 })
        : createLocalJWKSet(options.jwks);
  }

  async authenticate(req: Request): Promise<Caller> {
    if (hasQueryToken(req)) throw this.#refuse(req, 'invalid_request', QUERY_TOKEN_MESSAGE, QUERY_TOKEN_DESCRIPTION);
    const token = bearerToken(req);
    if (token === undefined) {
      throw this.#refuse(req, 'missing_token', 'Unauthorized: send Authorization: Bearer <access token>');
    }
    let payload: JWTPayload;
    try {
      const audience = this.#options.audience ?? this.#options.resource ?? '';
      ({ payload } = await jwtVerify(token, this.#keys, {
        issuer: this.#options.issuer,
        audience: typeof audience === 'string' ? audience : [...audience],
        clockTolerance: this.#options.clockToleranceSec ?? 5,
        ...(this.#options.algorithms !== undefined && { algorithms: [...this.#options.algorithms] }),
      }));
    } catch (error) {
      if (error instanceof joseErrors.JWKSTimeout || !(error instanceof joseErrors.JOSEError)) {
        // The keys could not be fetched: our problem, not the token's.
        throw new HttpError(
          503,
          ErrorCode.InternalError,
          'Service Unavailable: the signing keys cannot be loaded; retry later',
          {
            'Retry-After': '5',
          },
        );
      }
      const description =
        error instanceof joseErrors.JWTExpired ? 'The access token expired' : 'The access token is not valid';
      throw this.#refuse(req, 'invalid_token', `Unauthorized: ${description.toLowerCase()}`, description);
    }
    const claim = this.#options.principalClaim ?? 'sub';
    const principal = payload[claim];
    if (typeof principal !== 'string' || principal === '') {
      const description = `The access token has no '${claim}' claim`;
      throw this.#refuse(req, 'invalid_token', `Unauthorized: ${description.toLowerCase()}`, description);
    }
    const granted = grantedScopes(payload);
    if (!this.#required.every((scope) => granted.has(scope))) {
      throw this.#refuse(
        req,
        'insufficient_scope',
        `Forbidden: the access token lacks a required scope (${this.#required.join(' ')})`,
        'The access token lacks a required scope',
      );
    }
    return { principal };
  }

  #refuse(req: Request, reason: AuthError['reason'], message: string, description?: string): AuthError {
    const params: string[] = [];
    if (reason !== 'missing_token') params.push(`error=${quoted(reason)}`);
    if (description !== undefined) params.push(`error_description=${quoted(description)}`);
    if (this.#required.length > 0) params.push(`scope=${quoted(this.#required.join(' '))}`);
    const resource = resourceUrl(req, this.#options, this.#path);
    params.push(`resource_metadata=${quoted(resourceMetadataUrl(resource))}`);
    return new AuthError(reason, message, `Bearer ${params.join(', ')}`);
  }
}
