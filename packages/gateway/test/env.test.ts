import { describe, expect, it } from 'vitest';
import { gatewayOptionsFromEnv, parseTokens, resolveGatewayOptions } from '../src/index.js';

describe('configuration', () => {
  it('reads bearer tokens from env-style or file-style text', () => {
    expect(parseTokens('t1=alice, t2=bob')).toEqual(
      new Map([
        ['t1', 'alice'],
        ['t2', 'bob'],
      ]),
    );
    expect(parseTokens('# tokens\nt1 = alice\n\nt2=bob\n')).toEqual(
      new Map([
        ['t1', 'alice'],
        ['t2', 'bob'],
      ]),
    );
    expect(() => parseTokens('just-a-token')).toThrow('each token entry must read token=principal');
    expect(() => parseTokens('=alice')).toThrow('each token entry must read token=principal');
  });

  it('builds gateway options from the environment and refuses a short cursor secret', () => {
    const options = gatewayOptionsFromEnv({
      REDIS_URL: 'redis://10.0.0.1:6380',
      CURSOR_SECRET: 'a-long-enough-secret',
      AUTH_TOKENS: 't1=alice',
      KEY_PREFIX: 'prod',
      ALLOWED_HOSTS: 'mcp.example, localhost',
      TASKS_PAGE_SIZE: '20',
      TASK_POLL_INTERVAL_MS: '500',
      SSE_HEARTBEAT_MS: '5000',
    });
    expect(options).toEqual({
      redis: 'redis://10.0.0.1:6380',
      cursorSecret: 'a-long-enough-secret',
      auth: { mode: 'tokens', tokens: new Map([['t1', 'alice']]) },
      keyPrefix: 'prod',
      allowedHosts: ['mcp.example', 'localhost'],
      limits: { pageSize: 20, pollIntervalMs: 500 },
      sseHeartbeatMs: 5000,
    });
    expect(gatewayOptionsFromEnv({ CURSOR_SECRET: 'a-long-enough-secret' }).auth).toEqual({ mode: 'none' });
    expect(() => gatewayOptionsFromEnv({ CURSOR_SECRET: 'short' })).toThrow('CURSOR_SECRET must be set');
    expect(() => gatewayOptionsFromEnv({ CURSOR_SECRET: 'a-long-enough-secret', TASKS_PAGE_SIZE: 'ten' })).toThrow(
      "TASKS_PAGE_SIZE must be an integer, got 'ten'",
    );
  });

  it('refuses nonsense limits with a message naming the option', () => {
    const base = { redis: 'redis://127.0.0.1', cursorSecret: 'a-long-enough-secret' };
    expect(() => resolveGatewayOptions({ ...base, bodyLimitBytes: 0 })).toThrow(
      'bodyLimitBytes must be a positive integer, got 0',
    );
    expect(() => resolveGatewayOptions({ ...base, path: 'mcp' })).toThrow("path must start with '/', got 'mcp'");
    expect(() => resolveGatewayOptions({ ...base, auth: { mode: 'tokens', tokens: {} } })).toThrow(
      "auth mode 'tokens' needs at least one token",
    );
    expect(resolveGatewayOptions(base)).toMatchObject({
      bodyLimitBytes: 1_048_576,
      allowedOrigins: 'loopback',
      path: '/mcp',
    });
  });
});
