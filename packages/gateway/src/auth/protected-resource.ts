import type { Request, Response } from 'express';
import type { JwtAuthOptions } from '../options.js';

/** Where RFC 9728 puts protected-resource metadata. */
export const PROTECTED_RESOURCE_WELL_KNOWN = '/.well-known/oauth-protected-resource';

/** The protected resource: the configured URL, else this request's origin plus the MCP path. */
export function resourceUrl(req: Request, options: Pick<JwtAuthOptions, 'resource'>, path: string): string {
  if (options.resource !== undefined) return options.resource;
  return `${req.protocol}://${req.headers.host ?? 'localhost'}${path}`;
}

/** The metadata URL of a resource (RFC 9728 §3.1): the well-known path inserted before the resource's path. */
export function resourceMetadataUrl(resource: string): string {
  const url = new URL(resource);
  const suffix = url.pathname === '/' ? '' : url.pathname.replace(/\/$/, '');
  return `${url.origin}${PROTECTED_RESOURCE_WELL_KNOWN}${suffix}`;
}

/**
 * `GET /.well-known/oauth-protected-resource[/mcp]` (RFC 9728): names the resource, the authorization server
 * that issues tokens for it and the scopes it needs, so MCP clients can start the OAuth flow.
 */
export function protectedResourceHandler(options: JwtAuthOptions, path: string) {
  return (req: Request, res: Response): void => {
    const required = options.requiredScopes ?? [];
    res
      .set('Access-Control-Allow-Origin', '*')
      .set('Cache-Control', 'public, max-age=300')
      .json({
        resource: resourceUrl(req, options, path),
        authorization_servers: [...(options.authorizationServers ?? [options.issuer])],
        ...(required.length > 0 && { scopes_supported: [...required] }),
        bearer_methods_supported: ['header'],
        resource_name: 'taskgate',
      });
  };
}
