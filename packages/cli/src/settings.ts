// Only the packages' defaults modules: every command reads the settings, and none should load a gateway for it.
import { DEFAULT_DRAIN_TIMEOUT_MS, DEFAULT_KEY_PREFIX, DEFAULT_TASK_LIMITS } from '@taskgate/core/defaults';
import type { RateLimit } from '@taskgate/gateway';
import { GATEWAY_DEFAULTS as G } from '@taskgate/gateway/defaults';
import { z } from 'zod';
import { int, list, rateLimit, type Setting } from './setting-schemas.js';
import { ADMIN_SETTINGS } from './settings-admin.js';
import { AUTH_SETTINGS } from './settings-auth.js';
import { REDIS_SETTINGS } from './settings-redis.js';
import { WORKER_SETTINGS } from './settings-worker.js';

/** A rate limit as its setting spells it: `<points>/<seconds>`. */
const rateLimitText = (limit: RateLimit): string => `${limit.points}/${limit.durationSec}`;

/**
 * Every setting taskgate reads. Environment variables and `--flags` name the same settings; a flag wins
 * over the environment. The settings reference (docs/reference/settings.md) is checked against this list by a test.
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
  ...REDIS_SETTINGS,
  {
    env: 'TASKGATE_KEY_PREFIX',
    flag: '--key-prefix',
    scope: 'both',
    schema: z.string().regex(/^[A-Za-z0-9_.-]{1,64}$/, 'use 1-64 characters of A-Z a-z 0-9 _ . -'),
    default: DEFAULT_KEY_PREFIX,
    description: 'Prefix of every Redis key and channel; gateways and workers of one deployment share it.',
  },
  {
    env: 'LOG_LEVEL',
    flag: '--log-level',
    scope: 'both',
    schema: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']),
    default: 'info',
    description: 'Level of the JSON logs on stdout (audit events are `info` and `warn`).',
  },
  {
    env: 'TASKGATE_TRACE_REDIS',
    flag: '--trace-redis',
    scope: 'both',
    schema: z.enum(['true', 'false']).transform((value) => value === 'true'),
    default: 'false',
    description:
      "With OpenTelemetry tracing on (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_TRACES_EXPORTER` set), also a span per Lua script and BullMQ's own spans (bullmq-otel): a debugging aid, many spans per task.",
  },
  {
    env: 'TASKGATE_DRAIN_TIMEOUT_MS',
    flag: '--drain-timeout-ms',
    scope: 'both',
    schema: int(0),
    default: String(DEFAULT_DRAIN_TIMEOUT_MS),
    description:
      "On SIGTERM, how long running work may finish: a worker's tools (then they are aborted and their jobs released), a gateway's plain tool calls.",
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
  ...AUTH_SETTINGS,
  ...ADMIN_SETTINGS,
  {
    env: 'TASKGATE_CURSOR_SECRET',
    flag: '--cursor-secret',
    scope: 'gateway',
    schema: z.string().min(16, 'must be at least 16 characters'),
    description:
      'Signs `tasks/list` and `tools/list` cursors; every gateway of a deployment needs the same value. Required.',
  },
  {
    env: 'TASKGATE_REQUEST_STATE_SECRET',
    flag: '--request-state-secret',
    scope: 'gateway',
    schema: z.string().min(16, 'must be at least 16 characters'),
    description:
      'Signs the `requestState` of multi-round-trip requests on revision 2026-07-28 (HMAC-SHA256); every gateway ' +
      'of a deployment needs the same value. Default: the cursor secret.',
  },
  {
    env: 'TASKGATE_DEFAULT_TTL_MS',
    flag: '--default-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(DEFAULT_TASK_LIMITS.defaultTtlMs),
    description: 'ttl granted to a task whose request names none.',
  },
  {
    env: 'TASKGATE_MAX_TTL_MS',
    flag: '--max-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(DEFAULT_TASK_LIMITS.maxTtlMs),
    description: 'Largest ttl granted; longer requests are clamped to it. Tasks and results are deleted after it.',
  },
  {
    env: 'TASKGATE_MIN_TTL_MS',
    flag: '--min-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(DEFAULT_TASK_LIMITS.minTtlMs),
    description: 'Smallest ttl granted; shorter requests are raised to it.',
  },
  {
    env: 'TASKGATE_POLL_INTERVAL_MS',
    flag: '--poll-interval-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(DEFAULT_TASK_LIMITS.pollIntervalMs),
    description: 'pollInterval suggested to clients on every task.',
  },
  {
    env: 'TASKGATE_MAX_ACTIVE_TASKS',
    flag: '--max-active-tasks',
    scope: 'gateway',
    schema: int(0),
    default: String(DEFAULT_TASK_LIMITS.maxActivePerOwner),
    description: 'Tasks one owner may have working or waiting for input at once (0 = unlimited); more get -32010.',
  },
  {
    env: 'TASKGATE_MAX_SESSIONS_PER_PRINCIPAL',
    flag: '--max-sessions-per-principal',
    scope: 'gateway',
    schema: int(0),
    default: String(G.maxSessionsPerPrincipal),
    description:
      'Sessions one principal may have at once, counted in Redis across all gateways (0 = unlimited); `initialize` beyond it gets -32011. Not counted with auth off.',
  },
  {
    env: 'TASKGATE_MAX_STREAMS_PER_PRINCIPAL',
    flag: '--max-streams-per-principal',
    scope: 'gateway',
    schema: int(0),
    default: String(G.maxStreamsPerPrincipal),
    description:
      'SSE streams one principal (with auth off: one session) may have open on each gateway (0 = unlimited); more get -32012 (GET streams: HTTP 429).',
  },
  {
    env: 'TASKGATE_PAGE_SIZE',
    flag: '--page-size',
    scope: 'gateway',
    schema: int(1, 1000),
    default: String(DEFAULT_TASK_LIMITS.pageSize),
    description: 'Tasks per `tasks/list` page.',
  },
  {
    env: 'TASKGATE_CURSOR_TTL_MS',
    flag: '--cursor-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(DEFAULT_TASK_LIMITS.cursorTtlMs),
    description: 'How long a `tasks/list` or `tools/list` cursor stays valid.',
  },
  {
    env: 'TASKGATE_TOOLS_PAGE_SIZE',
    flag: '--tools-page-size',
    scope: 'gateway',
    schema: int(1, 1000),
    default: String(G.toolsPageSize),
    description: 'Entries per page of `tools/list`, `resources/list`, `resources/templates/list` and `prompts/list`.',
  },
  {
    env: 'TASKGATE_READ_TIMEOUT_MS',
    flag: '--read-timeout-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(G.readTimeoutMs),
    description: 'How long `resources/read`, `prompts/get` and `completion/complete` wait for a worker before -32603.',
  },
  {
    env: 'TASKGATE_RATE_LIMIT_CREATE',
    flag: '--rate-limit-create',
    scope: 'gateway',
    schema: rateLimit,
    default: rateLimitText(G.rateLimits.create),
    description:
      '`tools/call` requests (they create tasks) per principal: `<points>/<seconds>` or `off`. Counted in Redis across all gateways.',
  },
  {
    env: 'TASKGATE_RATE_LIMIT_READ',
    flag: '--rate-limit-read',
    scope: 'gateway',
    schema: rateLimit,
    default: rateLimitText(G.rateLimits.read),
    description:
      '`tasks/get`, `tasks/list`, `tasks/result`, `resources/read`, `prompts/get`, `completion/complete` and `subscriptions/listen` requests per principal: `<points>/<seconds>` or `off`.',
  },
  {
    env: 'TASKGATE_RATE_LIMIT_CANCEL',
    flag: '--rate-limit-cancel',
    scope: 'gateway',
    schema: rateLimit,
    default: rateLimitText(G.rateLimits.cancel),
    description: '`tasks/cancel` and `tasks/update` requests per principal: `<points>/<seconds>` or `off`.',
  },
  {
    env: 'TASKGATE_MAX_BODY_BYTES',
    flag: '--max-body-bytes',
    scope: 'gateway',
    schema: int(1024),
    default: String(G.bodyLimitBytes),
    description: 'Largest request body accepted (larger ones get HTTP 413).',
  },
  {
    env: 'TASKGATE_HEADERS_TIMEOUT_MS',
    flag: '--headers-timeout-ms',
    scope: 'gateway',
    schema: int(100),
    default: String(G.headersTimeoutMs),
    description:
      'How long a client may take to send request headers; a slower one (slowloris) gets 408 and is disconnected.',
  },
  {
    env: 'TASKGATE_ALLOWED_HOSTS',
    flag: '--allowed-hosts',
    scope: 'gateway',
    schema: list,
    default: G.allowedHosts.join(','),
    description: 'Host header values accepted (DNS-rebinding protection), comma-separated; `any` turns the check off.',
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
    env: 'TASKGATE_SSE_HEARTBEAT_MS',
    flag: '--sse-heartbeat-ms',
    scope: 'gateway',
    schema: int(100),
    default: String(G.sseHeartbeatMs),
    description: 'Interval of SSE keep-alive comments and stream lease refreshes (leases last three heartbeats).',
  },
  {
    env: 'TASKGATE_SSE_RETRY_MS',
    flag: '--sse-retry-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.sseRetryMs),
    description: 'The SSE `retry` field of priming events: how long clients wait before resuming a dropped stream.',
  },
  {
    env: 'TASKGATE_EVENT_LOG_MAX_EVENTS',
    flag: '--event-log-max-events',
    scope: 'gateway',
    schema: int(10),
    default: String(G.eventLogMaxEvents),
    description: 'Approximate number of events each SSE stream keeps in Redis for `Last-Event-ID` resumption.',
  },
  {
    env: 'TASKGATE_EVENT_LOG_RETENTION_MS',
    flag: '--event-log-retention-ms',
    scope: 'gateway',
    schema: int(1000),
    default: String(G.eventLogRetentionMs),
    description: 'How long SSE events stay resumable; a stream log expires this long after its last event.',
  },
  {
    env: 'TASKGATE_DIRECT_CALL_CANCEL_GRACE_MS',
    flag: '--direct-call-cancel-grace-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.directCallCancelGraceMs),
    description:
      'A plain call whose stream the client dropped is cancelled unless resumed (on any pod) within this time.',
  },
  {
    env: 'TASKGATE_SESSION_IDLE_TTL_MS',
    flag: '--session-idle-ttl-ms',
    scope: 'gateway',
    schema: int(1000),
    default: String(G.sessionIdleTtlMs),
    description: 'A session ends after this long without a request or an open GET stream.',
  },
  {
    env: 'TASKGATE_DIRECT_CALL_TTL_MS',
    flag: '--direct-call-ttl-ms',
    scope: 'gateway',
    schema: int(1),
    default: String(G.directCallTtlMs),
    description: 'Lifetime of the hidden record of a plain (non-task) tool call.',
  },
  {
    env: 'TASKGATE_INLINE_WAIT_MS',
    flag: '--inline-wait-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.inlineWaitMs),
    description:
      'A 2026-07-28 task of an `optional` tool that ends within this time is answered with its result (0: never); a tool may set its own.',
  },
  {
    env: 'TASKGATE_RESULT_STREAM_AFTER_MS',
    flag: '--result-stream-after-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.resultStreamAfterMs),
    description:
      'A 2025-11-25 `tasks/result` of a running task waits this long in the gateway before it answers with a quiet stream (resumable, nothing stored in Redis until the task has a message for the client); a task that ends sooner is answered as JSON (0: a quiet stream at once). The stream stores its state in Redis once the task has a message for the client.',
  },
  {
    env: 'TASKGATE_TOOL_STALE_AFTER_MS',
    flag: '--tool-stale-after-ms',
    scope: 'gateway',
    schema: int(1000),
    default: String(G.toolStaleAfterMs),
    description: 'A tool leaves `tools/list` when no worker announced it for this long.',
  },
  {
    env: 'TASKGATE_TOOL_CACHE_MS',
    flag: '--tool-cache-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.toolCacheMs),
    description: 'How long `tools/call` takes a tool from memory; a change workers announce clears it at once.',
  },
  {
    env: 'TASKGATE_WAITER_SAFETY_MS',
    flag: '--waiter-safety-ms',
    scope: 'gateway',
    schema: int(1000),
    default: String(G.waiterSafetyMs),
    description:
      'Every task a blocked request waits for is re-read once this often, an even share each second (a safety net under pub/sub).',
  },
  {
    env: 'TASKGATE_DRAIN_RETRY_AFTER_MS',
    flag: '--drain-retry-after-ms',
    scope: 'gateway',
    schema: int(0),
    default: String(G.drainRetryAfterMs),
    description:
      'Retry hint of a draining gateway: the SSE `retry` of the streams it ends and the `Retry-After` of its 503s.',
  },
  ...WORKER_SETTINGS,
] as const satisfies readonly Setting[];
