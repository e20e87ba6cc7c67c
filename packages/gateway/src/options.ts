import { TaskgateError, type TaskLimits } from '@taskgate/core';
import type { Implementation } from '@taskgate/protocol';
import type { Redis } from 'ioredis';
import { type Logger, noopLogger } from './logger.js';

/** Who may call: nobody is asked (`none`, for 127.0.0.1), or bearer tokens mapped to principals. */
export type AuthOptions =
  | { readonly mode: 'none' }
  | {
      readonly mode: 'tokens';
      /** Bearer token → principal name. The caller loads it from a file or the environment. */
      readonly tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>;
      /** `realm` of the `WWW-Authenticate` challenge. */
      readonly realm?: string;
    };

/** Everything `createGateway` accepts. Only `redis` and `cursorSecret` are required. */
export interface GatewayOptions {
  /** A connection the caller owns (the gateway duplicates it where it needs more), or a URL it opens itself. */
  readonly redis: Redis | string;
  /** Prefix of every Redis key; every gateway and worker of a deployment uses the same one. Default `tg`. */
  readonly keyPrefix?: string;
  /** Signs list cursors; the same ≥ 16-byte secret on every gateway of a deployment. */
  readonly cursorSecret: string | Uint8Array;
  /** Default `{ mode: 'none' }`: owner = session id; bind to 127.0.0.1. */
  readonly auth?: AuthOptions;
  /** Task limits: ttl default/min/max, pollInterval, per-owner concurrency, tasks/list page size, cursor age. */
  readonly limits?: Partial<TaskLimits>;
  /** Tools per `tools/list` page. Default 100. */
  readonly toolsPageSize?: number;
  /** Largest accepted POST body in bytes (larger → 413). Default 1 MiB. */
  readonly bodyLimitBytes?: number;
  /** A session ends after this long without a request or an open GET stream (ms). Default 30 min. */
  readonly sessionIdleTtlMs?: number;
  /** Interval of SSE keep-alive comments, and of GET-stream lease refreshes (ms). Default 15 s. */
  readonly sseHeartbeatMs?: number;
  /** Lifetime of the hidden record of a direct (non-task) tool call (ms, clamped to the ttl limits). Default 1 h. */
  readonly directCallTtlMs?: number;
  /** A direct call whose stream the client closed is cancelled after this long (ms). Default 5 s. */
  readonly directCallCancelGraceMs?: number;
  /** Host header names (or host:port) accepted; `'any'` turns the check off. Default localhost, 127.0.0.1, [::1]. */
  readonly allowedHosts?: readonly string[] | 'any';
  /** Origin values accepted when present; `'any'` turns the check off. Default: loopback origins only. */
  readonly allowedOrigins?: readonly string[] | 'any';
  /** A tool drops out of `tools/list` when no worker announced it for this long (ms). Default 30 s. */
  readonly toolStaleAfterMs?: number;
  /** How long `close()` lets direct-call streams finish before ending them (ms). Default 10 s. */
  readonly drainTimeoutMs?: number;
  /** The MCP endpoint's path. Default `/mcp`. */
  readonly path?: string;
  readonly serverInfo?: Implementation;
  /** `instructions` of the initialize result. */
  readonly instructions?: string;
  readonly logger?: Logger;
}

/** Options with every default filled in. */
export interface ResolvedGatewayOptions {
  readonly keyPrefix: string;
  readonly cursorSecret: string | Uint8Array;
  readonly auth: AuthOptions;
  readonly limits: Partial<TaskLimits>;
  readonly toolsPageSize: number;
  readonly bodyLimitBytes: number;
  readonly sessionIdleTtlMs: number;
  readonly sseHeartbeatMs: number;
  readonly directCallTtlMs: number;
  readonly directCallCancelGraceMs: number;
  readonly allowedHosts: readonly string[] | 'any';
  readonly allowedOrigins: readonly string[] | 'any' | 'loopback';
  readonly toolStaleAfterMs: number;
  readonly drainTimeoutMs: number;
  readonly path: string;
  readonly serverInfo: Implementation;
  readonly instructions?: string;
  readonly logger: Logger;
}

/** Host names a local gateway answers to by default (DNS-rebinding protection). */
export const LOOPBACK_HOSTS: readonly string[] = ['localhost', '127.0.0.1', '[::1]'];

/** Fills in defaults and refuses nonsense with a message naming the option. */
export function resolveGatewayOptions(options: GatewayOptions): ResolvedGatewayOptions {
  const resolved: ResolvedGatewayOptions = {
    keyPrefix: options.keyPrefix ?? 'tg',
    cursorSecret: options.cursorSecret,
    auth: options.auth ?? { mode: 'none' },
    limits: options.limits ?? {},
    toolsPageSize: options.toolsPageSize ?? 100,
    bodyLimitBytes: options.bodyLimitBytes ?? 1024 * 1024,
    sessionIdleTtlMs: options.sessionIdleTtlMs ?? 30 * 60 * 1000,
    sseHeartbeatMs: options.sseHeartbeatMs ?? 15_000,
    directCallTtlMs: options.directCallTtlMs ?? 60 * 60 * 1000,
    directCallCancelGraceMs: options.directCallCancelGraceMs ?? 5000,
    allowedHosts: options.allowedHosts ?? LOOPBACK_HOSTS,
    allowedOrigins: options.allowedOrigins ?? 'loopback',
    toolStaleAfterMs: options.toolStaleAfterMs ?? 30_000,
    drainTimeoutMs: options.drainTimeoutMs ?? 10_000,
    path: options.path ?? '/mcp',
    serverInfo: options.serverInfo ?? { name: 'taskgate', version: '0.1.0' },
    ...(options.instructions !== undefined && { instructions: options.instructions }),
    logger: options.logger ?? noopLogger,
  };
  const positive = [
    'toolsPageSize',
    'bodyLimitBytes',
    'sessionIdleTtlMs',
    'sseHeartbeatMs',
    'directCallTtlMs',
    'toolStaleAfterMs',
  ] as const;
  for (const name of positive) {
    if (!Number.isSafeInteger(resolved[name]) || resolved[name] <= 0) {
      throw new TaskgateError('INVALID_CONFIG', `${name} must be a positive integer, got ${resolved[name]}`);
    }
  }
  for (const name of ['directCallCancelGraceMs', 'drainTimeoutMs'] as const) {
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
  return resolved;
}

/** The [token, principal] pairs of a token map in either accepted form. */
export function tokenEntries(
  tokens: ReadonlyMap<string, string> | Readonly<Record<string, string>>,
): [string, string][] {
  return tokens instanceof Map ? [...tokens.entries()] : Object.entries(tokens);
}
