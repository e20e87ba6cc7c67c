import { type Logger, noopLogger, type RedisConnectionOptions, TaskgateError, type TaskLimits } from '@taskgate/core';
import type { Implementation } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import type { JSONWebKeySet } from 'jose';
import type { Registry } from 'prom-client';
import { GATEWAY_DEFAULTS } from './defaults.js';

/** JWT bearer tokens (OAuth 2.1 access tokens) checked against a JWKS, per the MCP authorization spec. */
export interface JwtAuthOptions {
  /** The signing keys: a JWKS URL (fetched and cached by jose) or a JWKS document (e.g. read from a file). */
  readonly jwks: URL | JSONWebKeySet;
  /** Required `iss`; also the authorization server named in the protected-resource metadata. */
  readonly issuer: string;
  /** Accepted `aud` values (tokens must be issued for this server). Default: `resource`. */
  readonly audience?: string | readonly string[];
  /** Scopes every token must carry (`scope` claim, space-separated, or `scp` array); else 403. */
  readonly requiredScopes?: readonly string[];
  /** Claim whose string value is the principal (task owner). Default `sub`. */
  readonly principalClaim?: string;
  /** Accepted signing algorithms. Default: whatever the JWKS keys allow (jose's default). */
  readonly algorithms?: readonly string[];
  /** Leeway for `exp`/`nbf` (seconds). Default 5. */
  readonly clockToleranceSec?: number;
  /**
   * The public URL of the MCP endpoint, the protected resource of RFC 9728 (e.g. `https://mcp.example.com/mcp`).
   * Default: built from each request's Host (which the Host check already restricts).
   */
  readonly resource?: string;
  /** Authorization servers listed in the protected-resource metadata. Default `[issuer]`. */
  readonly authorizationServers?: readonly string[];
}

/** Who may call: nobody is asked (`none`, for 127.0.0.1), static bearer tokens, or JWTs checked against a JWKS. */
export type AuthOptions =
  | { readonly mode: 'none' }
  | {
      readonly mode: 'tokens';
      /** Bearer token → principal name. The caller loads it from a file or the environment. */
      readonly tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
      /** `realm` of the `WWW-Authenticate` challenge. */
      readonly realm?: string;
    }
  | ({ readonly mode: 'jwt' } & JwtAuthOptions);

/** Operation classes with their own rate limit: task-creating `tools/call`, reads (tasks/get, list, result), cancel. */
export type OperationClass = 'create' | 'read' | 'cancel';

/** Every operation class, in the order metrics and docs list them. */
export const OPERATION_CLASSES: readonly OperationClass[] = ['create', 'read', 'cancel'];

/** At most `points` operations per `durationSec` seconds for each principal, counted across all gateways. */
export interface RateLimit {
  readonly points: number;
  readonly durationSec: number;
}

/** Everything `createGateway` accepts. Only `redis` and `cursorSecret` are required. */
export interface GatewayOptions {
  /** A connection the caller owns (the gateway duplicates it where it needs more), or connection options (a URL) it opens itself. */
  readonly redis: Redis | RedisConnectionOptions | string;
  /** Prefix of every Redis key; every gateway and worker of a deployment uses the same one. Default `tg`. */
  readonly keyPrefix?: string;
  /** Signs list cursors; the same ≥ 16-byte secret on every gateway of a deployment. */
  readonly cursorSecret: string | Uint8Array;
  /**
   * Signs the `requestState` of 2026-07-28 multi-round-trip requests; the same secret on every gateway of a
   * deployment. Default: the cursor secret.
   */
  readonly requestStateSecret?: string | Uint8Array;
  /** Default `{ mode: 'none' }`: owner = session id; bind to 127.0.0.1. */
  readonly auth?: AuthOptions;
  /** Task limits: ttl default/min/max, pollInterval, per-owner concurrency, tasks/list page size, cursor age. */
  readonly limits?: Partial<TaskLimits>;
  /** Entries per page of `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`. Default 100. */
  readonly toolsPageSize?: number;
  /** Largest accepted POST body in bytes (larger → 413). Default 1 MiB. */
  readonly bodyLimitBytes?: number;
  /** A session ends after this long without a request or an open GET stream (ms). Default 30 min. */
  readonly sessionIdleTtlMs?: number;
  /**
   * Interval of SSE keep-alive comments and of stream lease refreshes (ms); a stream's leases (its connection,
   * the session's GET stream, a task's carrier) last three heartbeats. Default 15 s.
   */
  readonly sseHeartbeatMs?: number;
  /** The SSE `retry` field of priming events: how long a client waits before it resumes a stream (ms). Default 1000. */
  readonly sseRetryMs?: number;
  /** Approximate number of events each stream's event log keeps for `Last-Event-ID` resumption. Default 1000. */
  readonly eventLogMaxEvents?: number;
  /** Events older than this are dropped from event logs, and a log expires this long after its last event (ms). Default 10 min. */
  readonly eventLogRetentionMs?: number;
  /** Lifetime of the hidden record of a direct (non-task) tool call (ms, clamped to the ttl limits). Default 1 h. */
  readonly directCallTtlMs?: number;
  /**
   * 2026-07-28, a client of the tasks extension calling an `optional` tool: how long the gateway waits for the
   * task it created before it answers the CreateTaskResult (ms); a task that ends in time is answered with its
   * result. A tool's own `inlineWaitMs` wins. Default 0: the CreateTaskResult at once.
   */
  readonly inlineWaitMs?: number;
  /** A direct call whose stream the client closed is cancelled after this long (ms). Default 5 s. */
  readonly directCallCancelGraceMs?: number;
  /**
   * How long a `tasks/result` of a running task waits in the process before it opens a resumable SSE stream
   * (ms): a task that ends sooner is answered as JSON and leaves no stream state in Redis. A message for the
   * client (the task's outbox) or `input_required` opens the stream at once. Default 1000; 0: at once.
   */
  readonly resultStreamAfterMs?: number;
  /** Host header names (or host:port) accepted; `'any'` turns the check off. Default localhost, 127.0.0.1, [::1]. */
  readonly allowedHosts?: readonly string[] | 'any';
  /** Origin values accepted when present; `'any'` turns the check off. Default: loopback origins only. */
  readonly allowedOrigins?: readonly string[] | 'any';
  /**
   * A tool (resource, resource template, prompt) drops out of its list when no worker announced it for this
   * long (ms). Default 30 s.
   */
  readonly toolStaleAfterMs?: number;
  /**
   * How long `tools/call` may take a tool's definition from memory (ms). A change workers announce clears
   * it at once; only a tool whose workers all stopped stays callable this much longer. Default 2 s.
   */
  readonly toolCacheMs?: number;
  /** How long `close()` lets direct-call streams finish before ending them (ms). Default 25 s. */
  readonly drainTimeoutMs?: number;
  /** How long `resources/read`, `prompts/get` and `completion/complete` wait for a worker (ms). Default 30 s. */
  readonly readTimeoutMs?: number;
  /**
   * Safety net under the pub/sub wake-up of blocked requests (tasks/result, plain calls, reads): every task
   * one of them waits for is re-read once this often (ms), an even share of them each second in one pipeline
   * per gateway. Status messages are not lost on a live connection and every reconnect re-reads at once, so
   * this only bounds the damage of a message lost some other way. Default 5 min (10,000 waiters: about 33
   * reads a second).
   */
  readonly waiterSafetyMs?: number;
  /**
   * The retry hint of a draining gateway (ms): the SSE `retry` field of the streams it ends, and (rounded up to
   * seconds) the `Retry-After` of the 503s it answers meanwhile. Default 1000.
   */
  readonly drainRetryAfterMs?: number;
  /**
   * Sessions one principal may have at once, counted in Redis across every gateway (0 = unlimited). Default
   * 1000; `initialize` beyond it gets -32011. Sessions of no principal (auth off) are not counted.
   */
  readonly maxSessionsPerPrincipal?: number;
  /**
   * SSE streams one owner (the principal; with auth off, the session) may have open on this gateway at once
   * (0 = unlimited). Default 1000: GET streams get HTTP 429 beyond it, streamed answers -32012.
   */
  readonly maxStreamsPerPrincipal?: number;
  /**
   * How long a client may take to send a request's headers (ms; Node's `server.headersTimeout`): a slower one
   * (slowloris) gets 408 and its socket closed. Default 20 s.
   */
  readonly headersTimeoutMs?: number;
  /**
   * Per-principal rate limits by operation class (SEC-3), enforced in Redis across every gateway. Default:
   * create 120 and cancel 120 a minute, read 1200 a minute; `{}` turns them all off.
   */
  readonly rateLimits?: Partial<Readonly<Record<OperationClass, RateLimit>>>;
  /**
   * Prometheus registry the gateway's metrics go into, served at `/metrics`. Default: a private registry per
   * gateway (without Node.js process metrics; pass `createMetricsRegistry({ defaultMetrics: true })` for those).
   */
  readonly metrics?: Registry;
  /** The MCP endpoint's path. Default `/mcp`. */
  readonly path?: string;
  /**
   * Bearer token of the admin listener (operator console, admin API, raw queues; `listenAdmin`), at least 16
   * characters. Without it `listenAdmin` refuses to start.
   */
  readonly adminToken?: string;
  readonly serverInfo?: Implementation;
  /** `instructions` of the initialize result. */
  readonly instructions?: string;
  readonly logger?: Logger;
}

/** Options with every default filled in. */
export interface ResolvedGatewayOptions {
  readonly keyPrefix: string;
  readonly cursorSecret: string | Uint8Array;
  readonly requestStateSecret?: string | Uint8Array;
  readonly auth: AuthOptions;
  readonly limits: Partial<TaskLimits>;
  readonly toolsPageSize: number;
  readonly bodyLimitBytes: number;
  readonly sessionIdleTtlMs: number;
  readonly sseHeartbeatMs: number;
  readonly sseRetryMs: number;
  readonly eventLogMaxEvents: number;
  readonly eventLogRetentionMs: number;
  readonly directCallTtlMs: number;
  readonly inlineWaitMs: number;
  readonly directCallCancelGraceMs: number;
  readonly resultStreamAfterMs: number;
  readonly allowedHosts: readonly string[] | 'any';
  readonly allowedOrigins: readonly string[] | 'any' | 'loopback';
  readonly toolStaleAfterMs: number;
  readonly toolCacheMs: number;
  readonly drainTimeoutMs: number;
  readonly readTimeoutMs: number;
  readonly waiterSafetyMs: number;
  readonly drainRetryAfterMs: number;
  readonly maxSessionsPerPrincipal: number;
  readonly maxStreamsPerPrincipal: number;
  readonly headersTimeoutMs: number;
  readonly rateLimits: Partial<Readonly<Record<OperationClass, RateLimit>>>;
  readonly path: string;
  readonly adminToken?: string;
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  readonly logger: Logger;
}

/** Fills in defaults and refuses nonsense with a message naming the option. */
export function resolveGatewayOptions(options: GatewayOptions): ResolvedGatewayOptions {
  const d = GATEWAY_DEFAULTS;
  const resolved: ResolvedGatewayOptions = {
    keyPrefix: options.keyPrefix ?? d.keyPrefix,
    cursorSecret: options.cursorSecret,
    ...(options.requestStateSecret !== undefined && { requestStateSecret: options.requestStateSecret }),
    auth: options.auth ?? { mode: 'none' },
    limits: options.limits ?? {},
    toolsPageSize: options.toolsPageSize ?? d.toolsPageSize,
    bodyLimitBytes: options.bodyLimitBytes ?? d.bodyLimitBytes,
    sessionIdleTtlMs: options.sessionIdleTtlMs ?? d.sessionIdleTtlMs,
    sseHeartbeatMs: options.sseHeartbeatMs ?? d.sseHeartbeatMs,
    sseRetryMs: options.sseRetryMs ?? d.sseRetryMs,
    eventLogMaxEvents: options.eventLogMaxEvents ?? d.eventLogMaxEvents,
    eventLogRetentionMs: options.eventLogRetentionMs ?? d.eventLogRetentionMs,
    directCallTtlMs: options.directCallTtlMs ?? d.directCallTtlMs,
    inlineWaitMs: options.inlineWaitMs ?? d.inlineWaitMs,
    directCallCancelGraceMs: options.directCallCancelGraceMs ?? d.directCallCancelGraceMs,
    resultStreamAfterMs: options.resultStreamAfterMs ?? d.resultStreamAfterMs,
    allowedHosts: options.allowedHosts ?? d.allowedHosts,
    allowedOrigins: options.allowedOrigins ?? d.allowedOrigins,
    toolStaleAfterMs: options.toolStaleAfterMs ?? d.toolStaleAfterMs,
    toolCacheMs: options.toolCacheMs ?? d.toolCacheMs,
    drainTimeoutMs: options.drainTimeoutMs ?? d.drainTimeoutMs,
    readTimeoutMs: options.readTimeoutMs ?? d.readTimeoutMs,
    waiterSafetyMs: options.waiterSafetyMs ?? d.waiterSafetyMs,
    drainRetryAfterMs: options.drainRetryAfterMs ?? d.drainRetryAfterMs,
    maxSessionsPerPrincipal: options.maxSessionsPerPrincipal ?? d.maxSessionsPerPrincipal,
    maxStreamsPerPrincipal: options.maxStreamsPerPrincipal ?? d.maxStreamsPerPrincipal,
    headersTimeoutMs: options.headersTimeoutMs ?? d.headersTimeoutMs,
    rateLimits: options.rateLimits ?? d.rateLimits,
    path: options.path ?? d.path,
    serverInfo: options.serverInfo ?? { name: 'taskgate', version: '0.1.0' },
    ...(options.instructions !== undefined && { instructions: options.instructions }),
    ...(options.adminToken !== undefined && { adminToken: options.adminToken }),
    logger: options.logger ?? noopLogger,
  };
  const positive = [
    'toolsPageSize',
    'bodyLimitBytes',
    'sessionIdleTtlMs',
    'sseHeartbeatMs',
    'eventLogMaxEvents',
    'eventLogRetentionMs',
    'directCallTtlMs',
    'toolStaleAfterMs',
    'readTimeoutMs',
    'waiterSafetyMs',
    'headersTimeoutMs',
  ] as const;
  for (const name of positive) {
    if (!Number.isSafeInteger(resolved[name]) || resolved[name] <= 0) {
      throw new TaskgateError('INVALID_CONFIG', `${name} must be a positive integer, got ${resolved[name]}`);
    }
  }
  const nonNegative = [
    'directCallCancelGraceMs',
    'resultStreamAfterMs',
    'inlineWaitMs',
    'drainTimeoutMs',
    'drainRetryAfterMs',
    'sseRetryMs',
    'toolCacheMs',
    'maxSessionsPerPrincipal',
    'maxStreamsPerPrincipal',
  ] as const;
  for (const name of nonNegative) {
    if (!Number.isSafeInteger(resolved[name]) || resolved[name] < 0) {
      throw new TaskgateError('INVALID_CONFIG', `${name} must be a non-negative integer, got ${resolved[name]}`);
    }
  }
  if (!resolved.path.startsWith('/')) {
    throw new TaskgateError('INVALID_CONFIG', `path must start with '/', got '${resolved.path}'`);
  }
  if (resolved.auth.mode === 'tokens' && tokenEntries(resolved.auth.tokens).length === 0) {
    throw new TaskgateError('INVALID_CONFIG', "auth mode 'tokens' needs at least one token");
  }
  if (resolved.auth.mode === 'jwt') checkJwtOptions(resolved.auth);
  if (resolved.adminToken !== undefined && resolved.adminToken.length < 16) {
    throw new TaskgateError('INVALID_CONFIG', 'adminToken must be at least 16 characters');
  }
  for (const [operation, limit] of Object.entries(resolved.rateLimits)) {
    if (limit === undefined) continue;
    if (!Number.isSafeInteger(limit.points) || limit.points <= 0 || !Number.isSafeInteger(limit.durationSec)) {
      throw new TaskgateError(
        'INVALID_CONFIG',
        `rateLimits.${operation} needs positive integer points and durationSec`,
      );
    }
    if (limit.durationSec <= 0) {
      throw new TaskgateError('INVALID_CONFIG', `rateLimits.${operation}.durationSec must be at least 1 second`);
    }
  }
  return resolved;
}

function checkJwtOptions(auth: JwtAuthOptions): void {
  if (auth.issuer === '') throw new TaskgateError('INVALID_CONFIG', "auth mode 'jwt' needs an issuer");
  const audience = auth.audience ?? auth.resource;
  if (audience === undefined || audience.length === 0) {
    throw new TaskgateError(
      'INVALID_CONFIG',
      "auth mode 'jwt' needs an audience (or a resource URL, the default audience): tokens must be issued for this server",
    );
  }
  if (auth.resource !== undefined && !URL.canParse(auth.resource)) {
    throw new TaskgateError('INVALID_CONFIG', `resource must be an absolute URL, got '${auth.resource}'`);
  }
}

/** The [token, principal] pairs of a token map in either accepted form. */
export function tokenEntries(
  tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
): [string, string][] {
  return tokens instanceof Map ? [...tokens.entries()] : Object.entries(tokens);
}
