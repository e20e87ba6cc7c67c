import { ErrorCode } from '@taskgate/protocol';
import type { NextFunction, Request, Response } from 'express';
import { HttpError, sendHttpError } from '../messages/http-error.js';

/** Whether the process should receive traffic: `draining` from the moment shutdown starts. */
export interface Readiness {
  /** True once shutdown started: readiness is off and new MCP requests are refused. */
  readonly draining: boolean;
  /** `ready`, or why not: `draining`, or `unavailable` (Redis does not answer or the scripts cannot be loaded). */
  state(): Promise<'ready' | 'draining' | 'unavailable'>;
}

/**
 * While draining, every new MCP request gets 503 with `Retry-After` and `Connection: close`: the load balancer
 * may still route to this pod for a moment after readiness went off, and the client's retry lands elsewhere.
 */
export function drainGuard(readiness: Readiness, retryAfterMs: number) {
  const seconds = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return (_req: Request, res: Response, next: NextFunction): void => {
    if (!readiness.draining) {
      next();
      return;
    }
    sendHttpError(
      res,
      new HttpError(
        503,
        ErrorCode.InternalError,
        'Service Unavailable: this gateway is shutting down; retry the request, another gateway will answer it',
        { 'Retry-After': seconds, Connection: 'close' },
      ),
    );
  };
}
