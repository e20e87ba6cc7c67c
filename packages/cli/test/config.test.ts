import { describe, expect, it } from 'vitest';
import { gatewayOptions } from '../src/commands/gateway.js';
import { workerOptions } from '../src/commands/worker.js';
import { ConfigError, loadConfig } from '../src/config.js';
import { parseTokens } from '../src/tokens.js';

const SECRET = { TASKGATE_CURSOR_SECRET: 'a-long-enough-secret' };

function problems(run: () => unknown): readonly string[] {
  try {
    run();
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  throw new Error('expected a ConfigError');
}

describe('configuration', () => {
  it('reads bearer tokens from env-style or file-style text', () => {
    const expected = new Map([
      ['t1', 'alice'],
      ['t2', 'bob'],
    ]);
    expect(parseTokens('t1=alice, t2=bob')).toEqual(expected);
    expect(parseTokens('# tokens\nt1 = alice\n\nt2=bob\n')).toEqual(expected);
    expect(() => parseTokens('just-a-token')).toThrow('each token entry must read token=principal');
    expect(() => parseTokens('=alice')).toThrow('each token entry must read token=principal');
  });

  it('takes a flag over the environment and applies defaults', () => {
    const { config, positionals } = loadConfig('gateway', ['--port', '4000', 'extra'], {
      ...SECRET,
      PORT: '5000',
      TASKGATE_RATE_LIMIT_READ: '10/1',
      TASKGATE_RATE_LIMIT_CANCEL: 'off',
    });
    expect(config.PORT).toBe(4000);
    expect(positionals).toEqual(['extra']);
    expect(config.TASKGATE_RATE_LIMIT_READ).toEqual({ points: 10, durationSec: 1 });
    expect(config.TASKGATE_RATE_LIMIT_CANCEL).toBeUndefined();
    expect(config.TASKGATE_RATE_LIMIT_CREATE).toEqual({ points: 120, durationSec: 60 });
    expect(config.TASKGATE_SSE_HEARTBEAT_MS).toBe(15_000);
    expect(config.TASKGATE_SESSION_IDLE_TTL_MS).toBe(1_800_000);
    expect(config.TASKGATE_JWT_SCOPES).toEqual([]);
  });

  it('lists every invalid setting at once, naming its variable and flag', () => {
    expect(
      problems(() =>
        loadConfig('gateway', ['--sse-heartbeat-ms', '10'], {
          PORT: 'eighty',
          TASKGATE_RATE_LIMIT_READ: 'fast',
          TASKGATE_AUTH: 'magic',
          TASKGATE_JWKS_URL: 'not a url',
        }),
      ),
    ).toEqual([
      'PORT (--port): Invalid input: expected number, received NaN',
      'TASKGATE_AUTH (--auth): Invalid option: expected one of "none"|"tokens"|"jwt"',
      'TASKGATE_JWKS_URL (--jwks-url): must be an absolute URL',
      'TASKGATE_RATE_LIMIT_READ (--rate-limit-read): use <points>/<seconds>, e.g. 120/60, or off',
      'TASKGATE_SSE_HEARTBEAT_MS (--sse-heartbeat-ms): Too small: expected number to be >=100',
    ]);
    expect(problems(() => loadConfig('worker', ['--no-such-flag']))[0]).toBe(
      'unknown flag --no-such-flag (taskgate worker --help lists every flag)',
    );
    expect(problems(() => loadConfig('worker', ['--metrics-prot', '1']))[0]).toContain('did you mean --metrics-port?');
  });

  it('builds gateway options, and explains what a JWT or exposed set-up is missing', () => {
    const { config } = loadConfig('gateway', [], {
      ...SECRET,
      TASKGATE_AUTH: 'tokens',
      TASKGATE_TOKENS: 't1=alice',
      TASKGATE_ALLOWED_HOSTS: 'any',
      TASKGATE_RATE_LIMIT_CREATE: 'off',
      TASKGATE_MAX_ACTIVE_TASKS: '7',
    });
    const options = gatewayOptions(config);
    expect(options.auth).toEqual({ mode: 'tokens', tokens: new Map([['t1', 'alice']]) });
    expect(options.allowedHosts).toBe('any');
    expect(options.rateLimits).toEqual({
      read: { points: 1200, durationSec: 60 },
      cancel: { points: 120, durationSec: 60 },
    });
    expect(options.limits).toMatchObject({ maxActivePerOwner: 7, maxTtlMs: 86_400_000 });
    expect(options).toMatchObject({ sseHeartbeatMs: 15_000, sessionIdleTtlMs: 1_800_000, drainTimeoutMs: 25_000 });

    const jwt = loadConfig('gateway', [], { TASKGATE_AUTH: 'jwt', HOST: '0.0.0.0' }).config;
    expect(problems(() => gatewayOptions(jwt))).toEqual([
      'TASKGATE_CURSOR_SECRET (--cursor-secret) is required: the same random value (≥ 16 characters) on every gateway, e.g. `openssl rand -base64 32`',
      'TASKGATE_AUTH=jwt needs exactly one of TASKGATE_JWKS_URL (--jwks-url) and TASKGATE_JWKS_FILE (--jwks-file)',
      'TASKGATE_AUTH=jwt needs TASKGATE_JWT_ISSUER (--jwt-issuer)',
      'TASKGATE_AUTH=jwt needs TASKGATE_JWT_AUDIENCE (--jwt-audience) or TASKGATE_RESOURCE_URL (--resource-url): tokens must be issued for this server',
    ]);
    const open = loadConfig('gateway', [], { ...SECRET, HOST: '0.0.0.0' }).config;
    expect(problems(() => gatewayOptions(open))[0]).toContain('HOST=0.0.0.0 with TASKGATE_AUTH=none');

    const remote = loadConfig('gateway', [], {
      ...SECRET,
      TASKGATE_AUTH: 'jwt',
      TASKGATE_JWKS_URL: 'https://as.example/jwks.json',
      TASKGATE_JWT_ISSUER: 'https://as.example',
      TASKGATE_RESOURCE_URL: 'https://mcp.example/mcp',
      TASKGATE_JWT_SCOPES: 'tasks:run, tasks:read',
    }).config;
    expect(gatewayOptions(remote).auth).toEqual({
      mode: 'jwt',
      jwks: new URL('https://as.example/jwks.json'),
      issuer: 'https://as.example',
      requiredScopes: ['tasks:run', 'tasks:read'],
      principalClaim: 'sub',
      resource: 'https://mcp.example/mcp',
    });
  });

  it('builds worker options with the metrics endpoint', () => {
    const { config } = loadConfig('worker', ['--metrics-port', '0'], { TASKGATE_STATUS_CHECK_MS: '500' });
    expect(workerOptions(config)).toMatchObject({
      metricsPort: 0,
      metricsHost: '127.0.0.1',
      statusCheckMs: 500,
      drainTimeoutMs: 25_000,
    });
  });
});
