import { randomBytes } from 'node:crypto';
import { Keys } from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import type { Logger } from '../logger.js';
import type { GatewayServices } from '../rpc/context.js';
import { openSessionStream } from '../sse/session-stream.js';
import { AuthError, Authenticator, type Caller } from './auth.js';
import { hostOriginGuard, requestProtocolVersion, requireAccept } from './guards.js';
import { HttpError, sendHttpError } from './http-error.js';
import { postHandler } from './post.js';
import { requireSession } from './session.js';

type McpHandler = (req: Request, res: Response, caller: Caller, logger: Logger) => Promise<void>;

/** Whether the process should receive traffic (turned off when shutting down). */
export interface Readiness {
  ready(): Promise<boolean>;
}

/**
 * The express app: the MCP endpoint (POST, GET, DELETE) behind Host/Origin validation and authentication,
 * plus `/healthz` (the process runs) and `/readyz` (it can reach Redis and is not shutting down).
 */
export function buildApp(services: GatewayServices, readiness: Readiness): Express {
  const { options } = services;
  const app = express();
  app.disable('x-powered-by');
  const authenticator = new Authenticator(options.auth);

  /** Authenticates, gives the request a logger with its own id, and turns every failure into a response. */
  const mcp =
    (handler: McpHandler) =>
    async (req: Request, res: Response): Promise<void> => {
      const logger = services.logger.child({ req: randomBytes(6).toString('hex'), http: req.method });
      try {
        const caller = authenticator.authenticate(req);
        await handler(req, res, caller, logger);
      } catch (error) {
        if (error instanceof AuthError) {
          logger.warn(
            { audit: 'auth.failed', reason: error.reason, ip: req.socket.remoteAddress },
            'authentication failed',
          );
        }
        if (error instanceof HttpError) {
          sendHttpError(res, error);
          return;
        }
        logger.error({ err: error instanceof Error ? error.message : String(error) }, 'request failed');
        sendHttpError(res, new HttpError(500, ErrorCode.InternalError, 'Internal error'));
      }
    };

  const post = postHandler(services);
  const get: McpHandler = async (req, res, caller, logger) => {
    requireAccept(req, ['text/event-stream']);
    requestProtocolVersion(req);
    const { session } = await requireSession(services, req, caller, logger);
    await openSessionStream(services, res, session, logger);
  };
  const remove: McpHandler = async (req, res, caller, logger) => {
    requestProtocolVersion(req);
    const { session } = await requireSession(services, req, caller, logger);
    await services.sessions.end(session.sessionId);
    logger.info({ audit: 'session.ended', session: Keys.digest(session.sessionId).slice(0, 12) }, 'session ended');
    res.status(200).end();
  };

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const ready = await readiness.ready().catch(() => false);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable' });
  });

  app.use(options.path, hostOriginGuard(options));
  app.post(options.path, mcp(post));
  app.get(options.path, mcp(get));
  app.delete(options.path, mcp(remove));
  app.all(options.path, (_req, res) => {
    res.set('Allow', 'GET, POST, DELETE');
    sendHttpError(res, new HttpError(405, ErrorCode.InvalidRequest, 'Method Not Allowed: use POST, GET or DELETE'));
  });
  // Last resort: nothing thrown anywhere may take the process down or leave a request hanging.
  app.use((error: unknown, _req: Request, res: Response, _next: NextFunction) => {
    services.logger.error({ err: error instanceof Error ? error.message : String(error) }, 'unhandled error');
    sendHttpError(res, new HttpError(500, ErrorCode.InternalError, 'Internal error'));
  });
  return app;
}
