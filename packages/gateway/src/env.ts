import { TaskgateError } from '@taskgate/core';
import type { AuthOptions, GatewayOptions } from './options.js';

/**
 * Bearer tokens from text: one `token=principal` pair per line or comma-separated; blank lines and `#`
 * comments are skipped. Suits both an environment variable and a file's contents.
 */
export function parseTokens(text: string): Map<string, string> {
  const tokens = new Map<string, string>();
  for (const raw of text.split(/[\n,]/)) {
    const line = raw.trim();
    if (line === '' || line.startsWith('#')) continue;
    const eq = line.indexOf('=');
    const token = line.slice(0, eq).trim();
    const principal = line.slice(eq + 1).trim();
    if (eq <= 0 || token === '' || principal === '') {
      throw new TaskgateError('INVALID_CONFIG', 'each token entry must read token=principal');
    }
    tokens.set(token, principal);
  }
  return tokens;
}

const integer = (env: NodeJS.ProcessEnv, name: string): number | undefined => {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isSafeInteger(value))
    throw new TaskgateError('INVALID_CONFIG', `${name} must be an integer, got '${raw}'`);
  return value;
};

/**
 * Gateway options from the environment, for the gateway entry module and tests that fork it:
 * REDIS_URL, KEY_PREFIX, CURSOR_SECRET, AUTH_TOKENS (`token=principal,...`; auth is off without it),
 * ALLOWED_HOSTS (comma-separated or `any`), TASK_POLL_INTERVAL_MS, TASK_DEFAULT_TTL_MS, TASK_MAX_TTL_MS,
 * TASK_MAX_ACTIVE_PER_OWNER, TASKS_PAGE_SIZE, TOOLS_PAGE_SIZE, SSE_HEARTBEAT_MS, SESSION_IDLE_TTL_MS.
 */
export function gatewayOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): GatewayOptions {
  const cursorSecret = env.CURSOR_SECRET;
  if (cursorSecret === undefined || cursorSecret.length < 16) {
    throw new TaskgateError('INVALID_CONFIG', 'CURSOR_SECRET must be set to at least 16 characters');
  }
  const auth: AuthOptions =
    env.AUTH_TOKENS !== undefined && env.AUTH_TOKENS !== ''
      ? { mode: 'tokens', tokens: parseTokens(env.AUTH_TOKENS) }
      : { mode: 'none' };
  const limits = {
    pollIntervalMs: integer(env, 'TASK_POLL_INTERVAL_MS'),
    defaultTtlMs: integer(env, 'TASK_DEFAULT_TTL_MS'),
    maxTtlMs: integer(env, 'TASK_MAX_TTL_MS'),
    maxActivePerOwner: integer(env, 'TASK_MAX_ACTIVE_PER_OWNER'),
    pageSize: integer(env, 'TASKS_PAGE_SIZE'),
  };
  const hosts = env.ALLOWED_HOSTS;
  const optional = {
    toolsPageSize: integer(env, 'TOOLS_PAGE_SIZE'),
    sseHeartbeatMs: integer(env, 'SSE_HEARTBEAT_MS'),
    sessionIdleTtlMs: integer(env, 'SESSION_IDLE_TTL_MS'),
  };
  return {
    redis: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    cursorSecret,
    auth,
    limits: Object.fromEntries(Object.entries(limits).filter(([, v]) => v !== undefined)),
    ...(env.KEY_PREFIX !== undefined && env.KEY_PREFIX !== '' && { keyPrefix: env.KEY_PREFIX }),
    ...(hosts !== undefined &&
      hosts !== '' && { allowedHosts: hosts === 'any' ? 'any' : hosts.split(',').map((h) => h.trim()) }),
    ...Object.fromEntries(Object.entries(optional).filter(([, v]) => v !== undefined)),
  };
}
