import { readFileSync } from 'node:fs';
import { createMetricsRegistry } from '@taskgate/core';
import { createGateway, type GatewayOptions, type JwtAuthOptions } from '@taskgate/gateway';
import { loadCommandConfig } from '../command-help.js';
import { type Config, ConfigError } from '../config.js';
import { createLogger } from '../logger.js';
import { checkRedisAtStart, redisConnectionOptions } from '../redis.js';
import { startTelemetry } from '../telemetry.js';
import { parseTokens } from '../tokens.js';

type Registry = NonNullable<GatewayOptions['metrics']>;
type JSONWebKeySet = Exclude<JwtAuthOptions['jwks'], URL>;

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);

function readFile(name: string, path: string, problems: string[]): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch (error) {
    problems.push(`${name}: cannot read ${path}: ${(error as NodeJS.ErrnoException).code ?? 'error'}`);
    return undefined;
  }
}

function tokensAuth(config: Config, problems: string[]): GatewayOptions['auth'] {
  const text =
    config.TASKGATE_TOKENS_FILE !== undefined
      ? readFile('TASKGATE_TOKENS_FILE', config.TASKGATE_TOKENS_FILE, problems)
      : config.TASKGATE_TOKENS;
  if (text === undefined) {
    problems.push('TASKGATE_AUTH=tokens needs TASKGATE_TOKENS_FILE (--tokens-file) or TASKGATE_TOKENS (--tokens)');
    return undefined;
  }
  try {
    const tokens = parseTokens(text);
    if (tokens.size === 0) problems.push('the token list is empty');
    return { mode: 'tokens', tokens };
  } catch (error) {
    problems.push(`tokens: ${(error as Error).message}`);
    return undefined;
  }
}

function jwks(config: Config, problems: string[]): JwtAuthOptions['jwks'] | undefined {
  const { TASKGATE_JWKS_URL: url, TASKGATE_JWKS_FILE: file } = config;
  if ((url === undefined) === (file === undefined)) {
    problems.push(
      'TASKGATE_AUTH=jwt needs exactly one of TASKGATE_JWKS_URL (--jwks-url) and TASKGATE_JWKS_FILE (--jwks-file)',
    );
    return undefined;
  }
  if (url !== undefined) return new URL(url);
  const text = readFile('TASKGATE_JWKS_FILE', file as string, problems);
  if (text === undefined) return undefined;
  try {
    const set = JSON.parse(text) as JSONWebKeySet;
    if (!Array.isArray(set.keys) || set.keys.length === 0) throw new Error('no keys');
    return set;
  } catch {
    problems.push(`TASKGATE_JWKS_FILE: ${file} is not a JWKS (a JSON object with a non-empty "keys" array)`);
    return undefined;
  }
}

function jwtAuth(config: Config, problems: string[]): GatewayOptions['auth'] {
  const keys = jwks(config, problems);
  const issuer = config.TASKGATE_JWT_ISSUER;
  if (issuer === undefined) problems.push('TASKGATE_AUTH=jwt needs TASKGATE_JWT_ISSUER (--jwt-issuer)');
  const audience = config.TASKGATE_JWT_AUDIENCE ?? [];
  if (audience.length === 0 && config.TASKGATE_RESOURCE_URL === undefined) {
    problems.push(
      'TASKGATE_AUTH=jwt needs TASKGATE_JWT_AUDIENCE (--jwt-audience) or TASKGATE_RESOURCE_URL (--resource-url): ' +
        'tokens must be issued for this server',
    );
  }
  if (keys === undefined || issuer === undefined) return undefined;
  return {
    mode: 'jwt',
    jwks: keys,
    issuer,
    ...(audience.length > 0 && { audience }),
    requiredScopes: config.TASKGATE_JWT_SCOPES,
    principalClaim: config.TASKGATE_JWT_PRINCIPAL_CLAIM,
    ...(config.TASKGATE_JWT_ALGORITHMS !== undefined && { algorithms: config.TASKGATE_JWT_ALGORITHMS }),
    ...(config.TASKGATE_RESOURCE_URL !== undefined && { resource: config.TASKGATE_RESOURCE_URL }),
    ...(config.TASKGATE_AUTHORIZATION_SERVERS !== undefined && {
      authorizationServers: config.TASKGATE_AUTHORIZATION_SERVERS,
    }),
  };
}

/** Gateway options from validated settings; every problem is reported at once as a ConfigError. */
export function gatewayOptions(config: Config, metrics?: Registry): GatewayOptions {
  const problems: string[] = [];
  const secret = config.TASKGATE_CURSOR_SECRET;
  if (secret === undefined) {
    problems.push(
      'TASKGATE_CURSOR_SECRET (--cursor-secret) is required: the same random value (≥ 16 characters) on every ' +
        'gateway, e.g. `openssl rand -base64 32`',
    );
  }
  let auth: GatewayOptions['auth'] = { mode: 'none' };
  if (config.TASKGATE_AUTH === 'tokens') auth = tokensAuth(config, problems);
  else if (config.TASKGATE_AUTH === 'jwt') auth = jwtAuth(config, problems);
  else if (!LOOPBACK.has(config.HOST)) {
    problems.push(
      `HOST=${config.HOST} with TASKGATE_AUTH=none would let anyone who reaches the port use it: ` +
        'keep HOST=127.0.0.1 or set TASKGATE_AUTH=tokens or jwt',
    );
  }
  if (config.TASKGATE_ADMIN_PORT !== undefined) {
    if (config.TASKGATE_ADMIN_TOKEN === undefined) {
      problems.push(
        'TASKGATE_ADMIN_PORT (--admin-port) needs TASKGATE_ADMIN_TOKEN (--admin-token): the admin listener ' +
          'answers only requests with Authorization: Bearer <admin token>, e.g. `openssl rand -base64 32`',
      );
    } else if (config.TASKGATE_ADMIN_PORT === config.PORT) {
      problems.push('TASKGATE_ADMIN_PORT must differ from PORT: the admin listener never shares the MCP port');
    }
  }
  if (problems.length > 0) throw new ConfigError(problems);
  const hosts = config.TASKGATE_ALLOWED_HOSTS;
  const rateLimits = Object.fromEntries(
    (
      [
        ['create', config.TASKGATE_RATE_LIMIT_CREATE],
        ['read', config.TASKGATE_RATE_LIMIT_READ],
        ['cancel', config.TASKGATE_RATE_LIMIT_CANCEL],
      ] as const
    ).filter(([, limit]) => limit !== undefined),
  );
  return {
    redis: redisConnectionOptions(config),
    keyPrefix: config.TASKGATE_KEY_PREFIX,
    cursorSecret: secret as string,
    ...(config.TASKGATE_REQUEST_STATE_SECRET !== undefined && {
      requestStateSecret: config.TASKGATE_REQUEST_STATE_SECRET,
    }),
    ...(auth !== undefined && { auth }),
    limits: {
      defaultTtlMs: config.TASKGATE_DEFAULT_TTL_MS,
      maxTtlMs: config.TASKGATE_MAX_TTL_MS,
      minTtlMs: config.TASKGATE_MIN_TTL_MS,
      pollIntervalMs: config.TASKGATE_POLL_INTERVAL_MS,
      maxActivePerOwner: config.TASKGATE_MAX_ACTIVE_TASKS,
      pageSize: config.TASKGATE_PAGE_SIZE,
      cursorTtlMs: config.TASKGATE_CURSOR_TTL_MS,
    },
    rateLimits,
    toolsPageSize: config.TASKGATE_TOOLS_PAGE_SIZE,
    readTimeoutMs: config.TASKGATE_READ_TIMEOUT_MS,
    bodyLimitBytes: config.TASKGATE_MAX_BODY_BYTES,
    headersTimeoutMs: config.TASKGATE_HEADERS_TIMEOUT_MS,
    maxSessionsPerPrincipal: config.TASKGATE_MAX_SESSIONS_PER_PRINCIPAL,
    maxStreamsPerPrincipal: config.TASKGATE_MAX_STREAMS_PER_PRINCIPAL,
    sessionIdleTtlMs: config.TASKGATE_SESSION_IDLE_TTL_MS,
    sseHeartbeatMs: config.TASKGATE_SSE_HEARTBEAT_MS,
    sseRetryMs: config.TASKGATE_SSE_RETRY_MS,
    eventLogMaxEvents: config.TASKGATE_EVENT_LOG_MAX_EVENTS,
    eventLogRetentionMs: config.TASKGATE_EVENT_LOG_RETENTION_MS,
    directCallCancelGraceMs: config.TASKGATE_DIRECT_CALL_CANCEL_GRACE_MS,
    directCallTtlMs: config.TASKGATE_DIRECT_CALL_TTL_MS,
    inlineWaitMs: config.TASKGATE_INLINE_WAIT_MS,
    resultStreamAfterMs: config.TASKGATE_RESULT_STREAM_AFTER_MS,
    toolStaleAfterMs: config.TASKGATE_TOOL_STALE_AFTER_MS,
    toolCacheMs: config.TASKGATE_TOOL_CACHE_MS,
    waiterSafetyMs: config.TASKGATE_WAITER_SAFETY_MS,
    drainTimeoutMs: config.TASKGATE_DRAIN_TIMEOUT_MS,
    drainRetryAfterMs: config.TASKGATE_DRAIN_RETRY_AFTER_MS,
    allowedHosts: hosts.includes('any') ? 'any' : hosts,
    ...(config.TASKGATE_ALLOWED_ORIGINS.length > 0 && { allowedOrigins: config.TASKGATE_ALLOWED_ORIGINS }),
    ...(metrics !== undefined && { metrics }),
    ...(config.TASKGATE_ADMIN_TOKEN !== undefined && { adminToken: config.TASKGATE_ADMIN_TOKEN }),
  };
}

/**
 * `taskgate gateway`: serves MCP on HOST:PORT until SIGTERM/SIGINT, then drains (readiness off, 503 with
 * Retry-After for new requests, streams ended with an SSE retry hint, plain calls finished) and exits 0.
 */
export async function runGateway(argv: readonly string[]): Promise<number> {
  const { config } = loadCommandConfig('gateway', argv);
  const registry = createMetricsRegistry({ defaultMetrics: true });
  const options = gatewayOptions(config, registry);
  const logger = createLogger(config.LOG_LEVEL, 'taskgate-gateway');
  const telemetry = await startTelemetry('taskgate-gateway', { redisSpans: config.TASKGATE_TRACE_REDIS, logger });
  await checkRedisAtStart(redisConnectionOptions(config), config, logger, registry);
  const gateway = createGateway({ ...options, logger });
  await gateway.listen(config.PORT, config.HOST);
  if (config.TASKGATE_ADMIN_PORT !== undefined)
    await gateway.listenAdmin(config.TASKGATE_ADMIN_PORT, config.TASKGATE_ADMIN_HOST);
  await new Promise<void>((resolve) => {
    const stop = (signal: NodeJS.Signals): void => {
      logger.info({ signal }, 'shutdown signal');
      void gateway.close().then(resolve);
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
  await telemetry?.shutdown();
  return 0;
}
