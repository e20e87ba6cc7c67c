import { describe, expect, it } from 'vitest';
import { resolveGatewayOptions } from '../src/index.js';

describe('gateway options', () => {
  const base = { redis: 'redis://127.0.0.1', cursorSecret: 'a-long-enough-secret' };

  it('refuses nonsense limits with a message naming the option', () => {
    expect(() => resolveGatewayOptions({ ...base, bodyLimitBytes: 0 })).toThrow(
      'bodyLimitBytes must be a positive integer, got 0',
    );
    expect(() => resolveGatewayOptions({ ...base, path: 'mcp' })).toThrow("path must start with '/', got 'mcp'");
    expect(() => resolveGatewayOptions({ ...base, auth: { mode: 'tokens', tokens: {} } })).toThrow(
      "auth mode 'tokens' needs at least one token",
    );
    expect(() => resolveGatewayOptions({ ...base, rateLimits: { read: { points: 0, durationSec: 1 } } })).toThrow(
      'rateLimits.read needs positive integer points and durationSec',
    );
    expect(() => resolveGatewayOptions({ ...base, rateLimits: { create: { points: 5, durationSec: 0 } } })).toThrow(
      'rateLimits.create.durationSec must be at least 1 second',
    );
    expect(resolveGatewayOptions(base)).toMatchObject({
      bodyLimitBytes: 1_048_576,
      allowedOrigins: 'loopback',
      path: '/mcp',
      drainRetryAfterMs: 1000,
      drainTimeoutMs: 25_000,
      rateLimits: { create: { points: 120, durationSec: 60 } },
    });
    expect(resolveGatewayOptions({ ...base, rateLimits: {} }).rateLimits).toEqual({});
  });

  it('refuses a JWT configuration that would accept tokens issued for anyone', () => {
    const jwks = { keys: [] };
    expect(() => resolveGatewayOptions({ ...base, auth: { mode: 'jwt', jwks, issuer: 'https://as.example' } })).toThrow(
      "auth mode 'jwt' needs an audience (or a resource URL, the default audience)",
    );
    expect(() =>
      resolveGatewayOptions({ ...base, auth: { mode: 'jwt', jwks, issuer: 'https://as.example', resource: 'mcp' } }),
    ).toThrow("resource must be an absolute URL, got 'mcp'");
    expect(
      resolveGatewayOptions({
        ...base,
        auth: { mode: 'jwt', jwks, issuer: 'https://as.example', resource: 'https://mcp.example/mcp' },
      }).auth.mode,
    ).toBe('jwt');
  });
});
