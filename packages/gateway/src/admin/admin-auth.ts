import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

/** Digest of a token: equal-length inputs for a constant-time comparison whatever the lengths given. */
function digestOf(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

/** How long a raw-queues browser session (cookie) lasts. */
const SESSION_MS = 60 * 60 * 1000;
/** Name of the cookie of the raw-queues view (a browser cannot send a header when it follows a link). */
export const QUEUES_COOKIE = 'taskgate_admin';

/**
 * The admin listener's authentication: `Authorization: Bearer <admin token>`, compared in constant time; 401
 * with a `WWW-Authenticate` challenge otherwise. The token is never logged. For the raw-queues view only, a
 * short-lived cookie issued to a signed-in page is accepted too: its expiry signed with the token (HMAC), so any
 * gateway of the deployment accepts it and none has to remember it.
 */
export class AdminAuth {
  readonly #token: Buffer;
  readonly #secret: string;

  constructor(token: string) {
    this.#token = digestOf(token);
    this.#secret = token;
  }

  #sign(until: number): Buffer {
    return createHmac('sha256', this.#secret).update(`raw-queues:${until}`).digest();
  }

  /** True when the request carries the admin token. */
  accepts(req: Request): boolean {
    const header = req.headers.authorization;
    const match = typeof header === 'string' ? /^Bearer ([^\s]+)$/i.exec(header) : null;
    return match?.[1] !== undefined && timingSafeEqual(digestOf(match[1]), this.#token);
  }

  /** Middleware: the admin token, or 401. */
  readonly require = (req: Request, res: Response, next: NextFunction): void => {
    if (this.accepts(req)) next();
    else refuse(res);
  };

  /** Middleware of the raw-queues view: the admin token or a live cookie session. */
  readonly requireForQueues = (req: Request, res: Response, next: NextFunction): void => {
    if (this.accepts(req)) {
      next();
      return;
    }
    const cookie = /(?:^|;\s*)taskgate_admin=(\d{13})\.([A-Za-z0-9_-]{43})(?:;|$)/.exec(req.headers.cookie ?? '');
    const until = Number(cookie?.[1]);
    const signature = Buffer.from(cookie?.[2] ?? '', 'base64url');
    const valid =
      cookie !== null && until > Date.now() && signature.length === 32 && timingSafeEqual(signature, this.#sign(until));
    if (valid) next();
    else refuse(res);
  };

  /** A new raw-queues session (the caller sent the token): its cookie. */
  openSession(): string {
    const until = Date.now() + SESSION_MS;
    const value = `${until}.${this.#sign(until).toString('base64url')}`;
    return `${QUEUES_COOKIE}=${value}; Path=/admin/queues; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}`;
  }
}

function refuse(res: Response): void {
  res.set('WWW-Authenticate', 'Bearer realm="taskgate-admin"');
  res.status(401).json({ error: 'The admin API needs Authorization: Bearer <TASKGATE_ADMIN_TOKEN>' });
}
