import { counterIn, gaugeIn, histogramIn } from '@taskgate/core';
import { ErrorCode, isClientRequestMethod } from '@taskgate/protocol';
import type { Registry } from 'prom-client';
import { OPERATION_CLASSES, type ResolvedGatewayOptions } from '../options.js';

/** JSON-RPC codes that get their own label value; anything else (e.g. a tool's own error codes) is `other`. */
const KNOWN_CODES = new Set<number>(Object.values(ErrorCode));
/** Bucket a JSON-RPC method name: the methods we answer, else `other` (never a caller's free text). */
export function methodLabel(method: string): string {
  return isClientRequestMethod(method) ? method : 'other';
}

/** Bucket a JSON-RPC error code. */
export function codeLabel(code: number): string {
  return KNOWN_CODES.has(code) ? String(code) : 'other';
}

/** Seconds, 1 ms to 10 s: the time to a JSON answer or to the start of an SSE stream. */
const RPC_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The gateway's own metrics (task lifecycle metrics come from the task store, Redis and queue metrics from
 * core). Every label has a bounded value set: methods, codes, routes, roles, operation classes and reasons
 * come from fixed lists, never from ids, owners or arguments.
 */
export class GatewayMetrics {
  readonly #http;
  readonly #rpc;
  readonly #rpcErrors;
  readonly #rpcSeconds;
  readonly #rateLimited;
  readonly #taskLimited;
  readonly #sessionLimited;
  readonly #streamLimited;
  readonly #authFailures;
  readonly #lookupFailures;
  readonly #sessions;
  #inlineWaiting = 0;
  readonly #draining;

  constructor(
    readonly registry: Registry,
    options: ResolvedGatewayOptions,
    limits: { maxActivePerOwner: number; maxTtlMs: number; defaultTtlMs: number },
    streams: { counts(): Readonly<Record<string, number>>; readonly waiting: number },
  ) {
    this.#http = counterIn(registry, {
      name: 'taskgate_http_requests_total',
      help: 'HTTP requests answered, by method, route (mcp, healthz, readyz, metrics, oauth_metadata, other) and status.',
      labelNames: ['method', 'route', 'status'],
    });
    this.#rpc = counterIn(registry, {
      name: 'taskgate_rpc_requests_total',
      help: 'JSON-RPC requests answered, by method.',
      labelNames: ['method'],
    });
    this.#rpcErrors = counterIn(registry, {
      name: 'taskgate_rpc_errors_total',
      help: 'JSON-RPC requests answered with an error, by method and error code.',
      labelNames: ['method', 'code'],
    });
    this.#rpcSeconds = histogramIn(registry, {
      name: 'taskgate_rpc_request_duration_seconds',
      help: 'Time to answer a JSON-RPC request, or to open the SSE stream that will carry its answer, by method.',
      labelNames: ['method'],
      buckets: RPC_BUCKETS,
    });
    this.#rateLimited = counterIn(registry, {
      name: 'taskgate_rate_limit_rejections_total',
      help: 'Requests refused by the per-principal rate limit (-32029), by operation class.',
      labelNames: ['operation'],
    });
    this.#taskLimited = counterIn(registry, {
      name: 'taskgate_task_limit_rejections_total',
      help: 'Task creations refused because the owner was at its concurrency limit (-32010).',
    });
    this.#sessionLimited = counterIn(registry, {
      name: 'taskgate_session_limit_rejections_total',
      help: 'initialize requests refused because the principal had the most sessions it may have (-32011).',
    });
    this.#streamLimited = counterIn(registry, {
      name: 'taskgate_stream_limit_rejections_total',
      help: 'SSE streams refused because the principal had the most streams it may have open on this gateway (-32012).',
    });
    this.#authFailures = counterIn(registry, {
      name: 'taskgate_auth_failures_total',
      help: 'Requests refused by authentication (401/403), by reason.',
      labelNames: ['reason'],
    });
    this.#lookupFailures = counterIn(registry, {
      name: 'taskgate_task_lookup_failures_total',
      help: 'Task look-ups that found no task of the caller (unknown, expired or foreign), by method.',
      labelNames: ['method'],
    });
    this.#sessions = counterIn(registry, {
      name: 'taskgate_sessions_created_total',
      help: 'MCP sessions created (initialize).',
    });
    // The task streams count themselves (the registry's `waiting`): a waiting stream holds no promise for this.
    const inline = (): number => this.#inlineWaiting;
    gaugeIn(registry, {
      name: 'taskgate_task_waiters',
      help: 'Requests blocked until a task ends (tasks/result streams and direct calls) on this gateway.',
      collect() {
        this.set(inline() + streams.waiting);
      },
    });
    this.#draining = gaugeIn(registry, {
      name: 'taskgate_gateway_draining',
      help: '1 while the gateway shuts down (readiness off, new requests refused with 503).',
    });
    gaugeIn(registry, {
      name: 'taskgate_sse_streams_open',
      help: 'Open SSE streams on this gateway, by role (session: GET streams; result: tasks/result; direct: plain tool calls).',
      labelNames: ['role'],
      collect() {
        for (const [role, count] of Object.entries(streams.counts())) this.set({ role }, count);
      },
    });
    const taskLimit = gaugeIn(registry, {
      name: 'taskgate_owner_active_tasks_limit',
      help: 'Configured maximum of working or input_required tasks per owner (0 = unlimited) [TTL-3].',
    });
    taskLimit.set(limits.maxActivePerOwner);
    gaugeIn(registry, {
      name: 'taskgate_task_ttl_max_seconds',
      help: 'Configured maximum task ttl; longer requests are clamped [TTL-3].',
    }).set(limits.maxTtlMs / 1000);
    gaugeIn(registry, {
      name: 'taskgate_task_ttl_default_seconds',
      help: 'ttl granted to tasks whose request names none (the configured default, at most the maximum).',
    }).set(Math.min(limits.defaultTtlMs, limits.maxTtlMs) / 1000);
    gaugeIn(registry, {
      name: 'taskgate_principal_sessions_limit',
      help: 'Configured maximum of sessions per principal across the deployment (0 = unlimited).',
    }).set(options.maxSessionsPerPrincipal);
    gaugeIn(registry, {
      name: 'taskgate_principal_streams_limit',
      help: 'Configured maximum of open SSE streams per principal on this gateway (0 = unlimited).',
    }).set(options.maxStreamsPerPrincipal);
    const points = gaugeIn(registry, {
      name: 'taskgate_rate_limit_points',
      help: 'Configured operations per window for each principal, by operation class (0 = no limit).',
      labelNames: ['operation'],
    });
    const window = gaugeIn(registry, {
      name: 'taskgate_rate_limit_window_seconds',
      help: 'Configured rate-limit window, by operation class (0 = no limit).',
      labelNames: ['operation'],
    });
    for (const operation of OPERATION_CLASSES) {
      const limit = options.rateLimits[operation];
      points.set({ operation }, limit?.points ?? 0);
      window.set({ operation }, limit?.durationSec ?? 0);
      this.#rateLimited.inc({ operation }, 0);
    }
    this.#taskLimited.inc(0);
    this.#sessionLimited.inc(0);
    this.#streamLimited.inc(0);
    this.#draining.set(0);
  }

  /** One HTTP response. */
  httpRequest(method: string, route: string, status: number): void {
    const verb = ['GET', 'POST', 'DELETE', 'HEAD', 'OPTIONS'].includes(method) ? method : 'other';
    this.#http.inc({ method: verb, route, status: String(status) });
  }

  /** One JSON-RPC request answered (`code` when it was an error); `seconds` until the answer or stream began. */
  rpcRequest(method: string, seconds: number, code?: number): void {
    const label = methodLabel(method);
    this.#rpc.inc({ method: label });
    this.#rpcSeconds.observe({ method: label }, seconds);
    if (code === undefined) return;
    this.#rpcErrors.inc({ method: label, code: codeLabel(code) });
    if (code === ErrorCode.TaskLimitExceeded) this.#taskLimited.inc();
    else if (code === ErrorCode.SessionLimitExceeded) this.#sessionLimited.inc();
    else if (code === ErrorCode.StreamLimitExceeded) this.#streamLimited.inc();
  }

  /** A GET stream refused for too many open streams (streamed answers count through `rpcRequest`). */
  streamLimited(): void {
    this.#streamLimited.inc();
  }

  rateLimited(operation: string): void {
    this.#rateLimited.inc({ operation });
  }

  authFailure(reason: string): void {
    this.#authFailures.inc({ reason });
  }

  lookupFailure(method: string): void {
    this.#lookupFailures.inc({ method: methodLabel(method) });
  }

  sessionCreated(): void {
    this.#sessions.inc();
  }

  /** Tracks one blocked wait until `done` settles (an inline answer's; task streams count themselves). */
  waiting<T>(done: Promise<T>): Promise<T> {
    this.#inlineWaiting += 1;
    return done.finally(() => {
      this.#inlineWaiting -= 1;
    });
  }

  draining(): void {
    this.#draining.set(1);
  }
}
