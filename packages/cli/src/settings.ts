import { z } from 'zod';

/** Which processes read a setting. */
export type SettingScope = 'gateway' | 'worker' | 'both';

/** One configuration setting: its environment variable, its flag, how it is parsed and what it means. */
export interface Setting {
  readonly env: string;
  readonly flag: string;
  readonly scope: SettingScope;
  readonly schema: z.ZodType;
  /** The default as documented (undefined: none). */
  readonly default?: string;
  readonly description: string;
}

const int = (min: number, max = Number.MAX_SAFE_INTEGER) => z.coerce.number().int().min(min).max(max);
const list = z.string().transform((value) =>
  value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== ''),
);

/**
 * Every setting taskgate reads. Environment variables and `--flags` name the same settings; a flag wins
 * over the environment. The README's configuration table is checked against this list by a test.
 */
export const SETTINGS = [
  {
    env: 'REDIS_URL',
    flag: '--redis-url',
    scope: 'both',
    schema: z.string().regex(/^rediss?:\/\//, 'must start with redis:// or rediss://'),
    default: 'redis://127.0.0.1:6379',
    description: 'Redis server that holds tasks, sessions, queues and event logs.',
  },
  {
    env: 'TASKGATE_KEY_PREFIX',
    flag: '--key-prefix',
    scope: 'both',
    schema: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use 1-64 characters of A-Z a-z 0-9 _ . -'),
    default: 'tg',
    description: 'Prefix of every Redis key and channel; gateways and workers of one deployment share it.',
  },
  {
    env: 'HOST',
    flag: '--host',
    scope: 'gateway',
    schema: z.string().min(1),
    default: '127.0.0.1',
    description: 'Address the gateway listens on. Use 0.0.0.0 in containers, with auth turned on.',
  },
  {
    env: 'PORT',
    flag: '--port',
    scope: 'gateway',
    schema: int(0, 65535),
    default: '3000',
    description: 'Port of the MCP endpoint (`/mcp`), `/healthz`, `/readyz` and `/metrics`.',
  },
  {
    env: 'TASKGATE_AUTH',
    flag: '--auth',
    scope: 'gateway',
    schema: z.enum(['none', 'tokens']),
    default: 'none',
    description: '`none`: each session owns its tasks (local use). `tokens`: bearer tokens map to principals.',
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
    env: 'TASKGATE_CURSOR_SECRET',
    flag: '--cursor-secret',
    scope: 'gateway',
    schema: z.string().min(16, 'must be at least 16 characters'),
    description: 'Signs `tasks/list` cursors; every gateway of a deployment needs the same value. Required.',
  },
  {
    env: 'TASKGATE_DEFAULT_TTL_MS',
    flag: '--default-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: '3600000',
    description: 'ttl granted to a task whose request names none.',
  },
  {
    env: 'TASKGATE_MAX_TTL_MS',
    flag: '--max-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: '86400000',
    description: 'Largest ttl granted; longer requests are clamped to it. Tasks and results are deleted after it.',
  },
  {
    env: 'TASKGATE_POLL_INTERVAL_MS',
    flag: '--poll-interval-ms',
    scope: 'gateway',
    schema: int(0),
    default: '1000',
    description: 'pollInterval suggested to clients on every task.',
  },
  {
    env: 'TASKGATE_MAX_ACTIVE_TASKS',
    flag: '--max-active-tasks',
    scope: 'gateway',
    schema: int(0),
    default: '100',
    description: 'Tasks one owner may have working or waiting for input at once (0 = unlimited).',
  },
  {
    env: 'TASKGATE_PAGE_SIZE',
    flag: '--page-size',
    scope: 'gateway',
    schema: int(1, 1000),
    default: '50',
    description: 'Tasks per `tasks/list` page.',
  },
  {
    env: 'TASKGATE_MAX_BODY_BYTES',
    flag: '--max-body-bytes',
    scope: 'gateway',
    schema: int(1024),
    default: '1048576',
    description: 'Largest request body accepted (larger ones get HTTP 413).',
  },
  {
    env: 'TASKGATE_ALLOWED_HOSTS',
    flag: '--allowed-hosts',
    scope: 'gateway',
    schema: list,
    default: 'localhost,127.0.0.1,[::1]',
    description: 'Host header values accepted (DNS-rebinding protection), comma-separated.',
  },
  {
    env: 'TASKGATE_ALLOWED_ORIGINS',
    flag: '--allowed-origins',
    scope: 'gateway',
    schema: list,
    default: '',
    description: 'Origin header values accepted besides none, comma-separated (browser clients).',
  },
  {
    env: 'TASKGATE_TOOLS',
    flag: '--tools',
    scope: 'worker',
    schema: list,
    description: 'Modules whose `tools` (or default) export lists the tools this worker runs, comma-separated.',
  },
  {
    env: 'TASKGATE_DRAIN_TIMEOUT_MS',
    flag: '--drain-timeout-ms',
    scope: 'worker',
    schema: int(0),
    default: '30000',
    description: 'On SIGTERM, how long running tools may take to finish before they are aborted.',
  },
  {
    env: 'LOG_LEVEL',
    flag: '--log-level',
    scope: 'both',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'Log level of the JSON logs on stdout.',
  },
] as const satisfies readonly Setting[];
