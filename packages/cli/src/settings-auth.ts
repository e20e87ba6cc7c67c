import { z } from 'zod';
import { list, type Setting, url } from './setting-schemas.js';

/** How gateways authenticate callers (none, static tokens, JWT access tokens) and describe themselves to OAuth clients. */
export const AUTH_SETTINGS = [
  {
    env: 'TASKGATE_AUTH',
    flag: '--auth',
    scope: 'gateway',
    schema: z.enum(['none', 'tokens', 'jwt']),
    default: 'none',
    description:
      '`none`: each session owns its tasks (local use). `tokens`: static bearer tokens map to principals. `jwt`: OAuth access tokens (JWT) checked against a JWKS.',
  },
  {
    env: 'TASKGATE_TOKENS_FILE',
    flag: '--tokens-file',
    scope: 'gateway',
    schema: z.string().min(1),
    description: 'With `tokens` auth: a file of `token=principal` lines (`#` starts a comment).',
  },
  {
    env: 'TASKGATE_TOKENS',
    flag: '--tokens',
    scope: 'gateway',
    schema: z.string().min(1),
    description: 'With `tokens` auth: `token=principal` pairs separated by commas (instead of a file).',
  },
  {
    env: 'TASKGATE_JWKS_URL',
    flag: '--jwks-url',
    scope: 'gateway',
    schema: url,
    description: "With `jwt` auth: URL of the authorization server's JWKS (fetched and cached; keys rotate).",
  },
  {
    env: 'TASKGATE_JWKS_FILE',
    flag: '--jwks-file',
    scope: 'gateway',
    schema: z.string().min(1),
    description: 'With `jwt` auth: a JWKS JSON file (instead of a URL), read at start-up.',
  },
  {
    env: 'TASKGATE_JWT_ISSUER',
    flag: '--jwt-issuer',
    scope: 'gateway',
    schema: z.string().min(1),
    description: 'With `jwt` auth: the required `iss`; also the authorization server the metadata names. Required.',
  },
  {
    env: 'TASKGATE_JWT_AUDIENCE',
    flag: '--jwt-audience',
    scope: 'gateway',
    schema: list,
    description: 'With `jwt` auth: accepted `aud` values, comma-separated. Default: `TASKGATE_RESOURCE_URL`.',
  },
  {
    env: 'TASKGATE_JWT_SCOPES',
    flag: '--jwt-scopes',
    scope: 'gateway',
    schema: list,
    default: '',
    description: 'With `jwt` auth: scopes every token must carry, comma-separated (missing: 403 `insufficient_scope`).',
  },
  {
    env: 'TASKGATE_JWT_PRINCIPAL_CLAIM',
    flag: '--jwt-principal-claim',
    scope: 'gateway',
    schema: z.string().min(1),
    default: 'sub',
    description: 'With `jwt` auth: the claim whose value is the principal that owns tasks.',
  },
  {
    env: 'TASKGATE_JWT_ALGORITHMS',
    flag: '--jwt-algorithms',
    scope: 'gateway',
    schema: list,
    description:
      'With `jwt` auth: accepted signing algorithms, comma-separated (e.g. `RS256,ES256`). Default: any the keys allow.',
  },
  {
    env: 'TASKGATE_RESOURCE_URL',
    flag: '--resource-url',
    scope: 'gateway',
    schema: url,
    description:
      "Public URL of the MCP endpoint (e.g. `https://mcp.example.com/mcp`): the protected resource of the OAuth metadata. Default: from each request's Host.",
  },
  {
    env: 'TASKGATE_AUTHORIZATION_SERVERS',
    flag: '--authorization-servers',
    scope: 'gateway',
    schema: list,
    description: 'With `jwt` auth: authorization servers the protected-resource metadata lists. Default: the issuer.',
  },
] as const satisfies readonly Setting[];
