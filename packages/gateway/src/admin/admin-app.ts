import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { consoleDir } from '@taskgate/console';
import type { EventBus, Logger } from '@taskgate/core';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { type AdminApiDeps, adminApi } from './admin-api.js';
import type { AdminAuth } from './admin-auth.js';
import { taskEvents } from './admin-events.js';
import { RAW_QUEUES_PATH, rawQueues } from './raw-queues.js';

/** The console's pages may load only their own files and talk only to their own origin. */
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

export interface AdminAppDeps extends AdminApiDeps {
  readonly auth: AdminAuth;
  readonly bus: EventBus;
  readonly heartbeatMs: number;
  readonly logger: Logger;
}

/**
 * The admin listener's app (never the public port's): the admin API, live task updates (SSE), the console's
 * static page and BullMQ's raw queues. Everything but the console's files (which hold no data) needs the
 * admin token.
 */
export function buildAdminApp(deps: AdminAppDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.use((_req, res, next) => {
    res.set({ 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer', 'Cache-Control': 'no-store' });
    next();
  });
  const { auth } = deps;
  app.get('/admin/api/events', auth.require, taskEvents(deps.bus, deps.heartbeatMs, deps.logger));
  // A signed-in page opens the raw-queues view with a cookie (a link cannot carry the header).
  app.post('/admin/api/session', auth.require, (_req, res) => {
    res.set('Set-Cookie', auth.openSession()).status(204).end();
  });
  app.use('/admin/api', auth.require, adminApi(deps));
  app.use(RAW_QUEUES_PATH, auth.requireForQueues, ...rawQueues(deps.catalog, deps.queues, deps.logger));

  const files = consoleDir;
  const page = (_req: Request, res: Response, next: NextFunction): void => {
    res.set('Content-Security-Policy', CSP);
    next();
  };
  app.get('/', (_req, res) => res.redirect(302, '/admin/'));
  app.use('/admin', page, express.static(files, { index: 'index.html', fallthrough: true }));
  app.get(['/admin', '/admin/'], page, (_req, res) => {
    if (existsSync(join(files, 'index.html'))) return res.sendFile(join(files, 'index.html'));
    res.status(503).type('text/plain').send('The console is not built: run `npx turbo run build`\n');
  });
  app.use((_req, res) => {
    res.status(404).json({ error: 'Not found' });
  });
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const status = (error as { status?: unknown }).status;
    if (typeof status === 'number' && status >= 400 && status < 500) {
      res.status(status).json({ error: (error as Error).message });
      return;
    }
    deps.logger.error({ err: (error as Error).message }, 'admin request failed');
    res.status(500).json({ error: 'Internal error' });
  });
  return app;
}
