import type { NextFunction, Request, Response } from 'express';
import { PROTECTED_RESOURCE_WELL_KNOWN } from '../auth/protected-resource.js';
import type { GatewayMetrics } from '../ops/gateway-metrics.js';

const FIXED_ROUTES: Readonly<Record<string, string>> = {
  '/healthz': 'healthz',
  '/readyz': 'readyz',
  '/metrics': 'metrics',
};

/** The bounded `route` label of a request path. */
export function routeLabel(path: string, mcpPath: string): string {
  if (path === mcpPath) return 'mcp';
  if (path.startsWith(PROTECTED_RESOURCE_WELL_KNOWN)) return 'oauth_metadata';
  return FIXED_ROUTES[path] ?? 'other';
}

/** Counts every HTTP response by method, route and status once it is sent (or the client went away). */
export function observeHttp(metrics: GatewayMetrics, mcpPath: string) {
  return (req: Request, res: Response, next: NextFunction): void => {
    countResponse(metrics, req, res, routeLabel(req.path, mcpPath));
    next();
  };
}

/** Counts one response under `route` once it is sent, or with status 499 when the client went away first. */
export function countResponse(metrics: GatewayMetrics, req: Request, res: Response, route: string): void {
  let counted = false;
  const count = (): void => {
    if (counted) return;
    counted = true;
    metrics.httpRequest(req.method, route, res.headersSent ? res.statusCode : 499);
  };
  // 'close' follows 'finish' on every response, or comes alone when the client went away: one listener,
  // added with `on` (the guard makes it once), spares the two wrappers `once` makes per request.
  res.on('close', count);
}
