import { randomBytes } from 'node:crypto';
import { IncomingMessage, ServerResponse } from 'node:http';
import { errorMessage, isRedisUnavailable, isReplicationTimeout, Keys, type Logger } from '@taskgate/core';
import { ErrorCode } from '@taskgate/protocol';
import express, { type Express, type NextFunction, type Request, type Response } from 'express';
import { createAuthenticator } from '../auth/auth.js';
import { AuthError, type Caller } from '../auth/caller.js';
import { PROTECTED_RESOURCE_WELL_KNOWN, protectedResourceHandler } from '../auth/protected-resource.js';
import { HttpError, requestMethodOf, sendHttpError } from '../messages/http-error.js';
import type { GatewayMetrics } from '../ops/gateway-metrics.js';
import { streamLimitHttpError } from '../ops/stream-quota.js';
import { traceMcpRequest } from '../ops/trace-request.js';
import type { RunnerServices } from '../run/run-request.js';
import { openGetStream } from '../streams/get-stream.js';
import type { StreamServices } from '../streams/stream-context.js';
import { requestProtocolVersion } from '../wire/rev2025-11-25/protocol-version.js';
import { requireSession } from '../wire/rev2025-11-25/session.js';
import type { RevisionServices } from '../wire/revisions.js';
import { drainGuard, type Readiness } from './drain.js';
import { hostOriginGuard, requireAccept } from './guards.js';
import { countResponse, observeHttp } from './observe-http.js';
import { postHandler } from './post.js';

/** What the HTTP layer uses: the runner's and the codecs' services, and the session's GET stream. */
export type AppServices = RunnerServices & RevisionServices & StreamServices;

type McpHandler = (req: Request, res: Response, caller: Caller, logger: Logger) => Promise<void>;

/** A caller-supplied request id we are willing to log and echo (else we make one). */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;
/** Request ids this process makes: a random tag per process and a counter (ids correlate logs; no secret). */
const PROCESS_TAG = randomBytes(4).toString('hex');
let requestCount = 0;

/**
 * The express app: the MCP endpoint (POST, GET, DELETE) behind the drain guard, Host/Origin validation and
 * authentication, plus `/healthz` (the process runs), `/readyz` (Redis answers, the scripts are loaded, not
 * draining), `/metrics` (Prometheus) and, with JWT auth, the RFC 9728 protected-resource metadata.
 */
export function buildApp(services: AppServices, readiness: Readiness): Express {
  const { options, metrics } = services;
  const app = express();
  app.disable('x-powered-by');
  // JSON-RPC answers are never cached or revalidated: no ETag hashing per response.
  app.disable('etag');
  const authenticator = createAuthenticator(options.auth, options.path);
  app.use(observeHttp(metrics, options.path));

  /** Turns a request's failure into its response (and the audit line of a refused authentication). */
  const failed = (req: Request, res: Response, logger: Logger, error: unknown): void => {
    if (error instanceof AuthError) {
      metrics.authFailure(error.reason);
      logger.warn(
        { audit: 'auth.failed', reason: error.reason, status: error.status, ip: req.socket.remoteAddress },
        'authentication failed',
      );
    }
    if (error instanceof HttpError) {
      sendHttpError(res, error);
      return;
    }
    if (isReplicationTimeout(error)) {
      sendHttpError(res, HttpError.notReplicated(requestMethodOf(res)));
      return;
    }
    if (isRedisUnavailable(error)) {
      logger.warn({ err: errorMessage(error) }, 'redis unavailable: request refused with 503');
      sendHttpError(res, HttpError.redisUnavailable());
      return;
    }
    logger.error({ err: errorMessage(error) }, 'request failed');
    sendHttpError(res, new HttpError(500, ErrorCode.InternalError, 'Internal error'));
  };

  /**
   * Authenticates, gives the request a logger with its id and principal, and turns every failure into a
   * response. A chain of promises, not an async function: a request that waits (a blocked tasks/result) keeps
   * no suspended frame of it.
   */
  const mcp =
    (handler: McpHandler) =>
    (req: Request, res: Response): Promise<void> => {
      const given = req.headers['x-request-id'];
      const requestId =
        typeof given === 'string' && REQUEST_ID.test(given) ? given : `${PROCESS_TAG}-${(++requestCount).toString(36)}`;
      res.set('X-Request-Id', requestId);
      let logger = services.logger.child({ req: requestId, http: req.method });
      return authenticator
        .authenticate(req)
        .then((caller) => {
          if (caller.principal !== undefined) logger = logger.child({ principal: caller.principal });
          return handler(req, res, caller, logger);
        })
        .catch((error: unknown) => failed(req, res, logger, error));
    };

  const post = postHandler(services);
  const get: McpHandler = async (req, res, caller, logger) => {
    requireAccept(req, ['text/event-stream']);
    requestProtocolVersion(req.headers);
    const { session, owner } = await requireSession(services, req.headers, caller, logger);
    const release = services.streamQuota.take(owner);
    if (release === undefined) {
      metrics.streamLimited();
      logger.warn(
        { audit: 'stream_limited', owner: Keys.ownerId(owner), limit: services.streamQuota.max },
        'too many open streams',
      );
      throw streamLimitHttpError(services.streamQuota.max);
    }
    res.once('close', release);
    const principal = caller.principal === undefined ? {} : { principal: caller.principal };
    await openGetStream({ services, session, owner, ...principal, logger }, req, res).catch((error: unknown) => {
      release();
      throw error;
    });
  };
  const remove: McpHandler = async (req, res, caller, logger) => {
    requestProtocolVersion(req.headers);
    const { session } = await requireSession(services, req.headers, caller, logger);
    await services.sessions.end(session.sessionId, session.principalId);
    logger.info({ audit: 'session.ended', session: Keys.digest(session.sessionId).slice(0, 12) }, 'session ended');
    res.status(200).end();
  };

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  app.get('/readyz', async (_req, res) => {
    const state = await readiness.state().catch(() => 'unavailable' as const);
    res.status(state === 'ready' ? 200 : 503).json({ status: state });
  });
  app.get('/metrics', async (_req, res) => {
    try {
      const body = await metrics.registry.metrics();
      res.set('Content-Type', metrics.registry.contentType).send(body);
    } catch (error) {
      services.logger.error({ err: errorMessage(error) }, 'metrics collection failed');
      res.status(500).type('text/plain').send('metrics collection failed\n');
    }
  });
  if (options.auth.mode === 'jwt') {
    const metadata = protectedResourceHandler(options.auth, options.path);
    app.get(PROTECTED_RESOURCE_WELL_KNOWN, metadata);
    if (options.path !== '/') app.get(`${PROTECTED_RESOURCE_WELL_KNOWN}${options.path}`, metadata);
  }

  const methodNotAllowed = (_req: Request, res: Response): void => {
    res.set('Allow', 'GET, POST, DELETE');
    sendHttpError(res, new HttpError(405, ErrorCode.InvalidRequest, 'Method Not Allowed: use POST, GET or DELETE'));
  };
  const guards = [
    traceMcpRequest(options.path),
    drainGuard(readiness, options.drainRetryAfterMs),
    hostOriginGuard(options),
  ];
  const postMcp = mcp(post);
  /** The guards, then the handler: what the routes below do for a POST to the MCP path. */
  const runPost = (req: Request, res: Response, next: NextFunction): void => {
    let index = 0;
    const step = (error?: unknown): void => {
      const guard = guards[index++];
      if (error !== undefined) next(error);
      else if (guard === undefined) void postMcp(req, res);
      else guard(req, res, step);
    };
    step();
  };
  // Mounted in another app, or a URL the fast dispatch below leaves to the router: the same, one route earlier.
  app.use((req, res, next) => {
    if (req.method !== 'POST' || req.path !== options.path) next();
    else runPost(req, res, next);
  });
  app.use(options.path, ...guards);
  // Express would answer HEAD with the GET handler: a HEAD would open (and hold the lease of) a session stream.
  app.head(options.path, methodNotAllowed);
  app.post(options.path, postMcp);
  app.get(options.path, mcp(get));
  app.delete(options.path, mcp(remove));
  app.all(options.path, methodNotAllowed);
  // Last resort: nothing thrown anywhere may take the process down or leave a request hanging.
  const unhandled = (error: unknown, _req: Request, res: Response, _next: NextFunction): void => {
    services.logger.error({ err: errorMessage(error) }, 'unhandled error');
    sendHttpError(res, new HttpError(500, ErrorCode.InternalError, 'Internal error'));
  };
  app.use(unhandled);
  dispatchPostsDirectly(app, metrics, options.path, (req, res) =>
    runPost(req, res, (error?: unknown) => unhandled(error, req, res, () => {})),
  );
  return app;
}

/**
 * The request every task makes twice, a POST to the MCP path spelt exactly (a query string allowed), skips
 * express's router: the app's own dispatch gives it express's request and response as the router would and
 * runs `post` (guards, then the handler), counted as route `mcp`. The router's walk over every route and its
 * URL parsing cost more than the guards. Every other request, and the app mounted in another, is the router's.
 */
function dispatchPostsDirectly(
  app: Express,
  metrics: GatewayMetrics,
  path: string,
  post: (req: Request, res: Response) => void,
): void {
  const dispatch = app as unknown as {
    handle(req: IncomingMessage, res: ServerResponse, callback?: unknown): void;
  };
  const routed = dispatch.handle;
  dispatch.handle = function handle(this: unknown, req, res, callback) {
    const url = req.url ?? '';
    const exact = url.startsWith(path) && (url.length === path.length || url.charCodeAt(path.length) === 63); // '?'
    if (callback !== undefined || req.method !== 'POST' || !exact) {
      routed.call(this, req, res, callback);
      return;
    }
    // Made as express's already by a server given `messageClassesOf(app)`; otherwise given its prototype here.
    const request = (IS_PROTOTYPE.call(app.request, req) ? req : Object.setPrototypeOf(req, app.request)) as Request;
    const response = (
      IS_PROTOTYPE.call(app.response, res) ? res : Object.setPrototypeOf(res, app.response)
    ) as Response;
    request.res = response;
    response.req = request;
    response.locals ??= Object.create(null);
    countResponse(metrics, request, response, 'mcp');
    post(request, response);
  };
}

const IS_PROTOTYPE = Object.prototype.isPrototypeOf;

/** The classes a Node HTTP server makes its requests and responses of (its options of the same names). */
export interface MessageClasses {
  readonly IncomingMessage: typeof IncomingMessage;
  readonly ServerResponse: typeof ServerResponse;
}

/**
 * Request and response classes whose objects are `app`'s express request and response from the start: a
 * server made with them spares each POST the two prototype changes of `dispatchPostsDirectly` (a new hidden
 * class for each object, 1.9 % of the gateway's CPU with the guards around them).
 */
export function messageClassesOf(app: Express): MessageClasses {
  class AppRequest extends IncomingMessage {}
  class AppResponse extends ServerResponse {}
  Object.setPrototypeOf(AppRequest.prototype, app.request);
  Object.setPrototypeOf(AppResponse.prototype, app.response);
  return { IncomingMessage: AppRequest, ServerResponse: AppResponse as typeof ServerResponse };
}
