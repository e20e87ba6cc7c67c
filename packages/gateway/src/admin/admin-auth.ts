import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
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
 * short-lived cookie issued to a signed-in page is accepted too.
 */
export class AdminAuth {
  readonly #token: Buffer;
  readonly #sessions = new Map<string, number>();

  constructor(token: string) {
    this.#token = digestOf(token);
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
    const cookie = /(?:^|;\s*)taskgate_admin=([A-Za-z0-9_-]{32})/.exec(req.headers.cookie ?? '')?.[1];
    const until = cookie === undefined ? undefined : this.#sessions.get(cookie);
    if (until !== undefined && until > Date.now()) next();
    else refuse(res);
  };

  /** A new raw-queues session (the caller sent the token): its cookie. */
  openSession(): string {
    const now = Date.now();
    for (const [id, until] of this.#sessions) if (until <= now) this.#sessions.delete(id);
    const id = randomBytes(24).toString('base64url');
    this.#sessions.set(id, now + SESSION_MS);
    return `${QUEUES_COOKIE}=${id}; Path=/admin/queues; HttpOnly; SameSite=Strict; Max-Age=${SESSION_MS / 1000}`;
  }
}

function refuse(res: Response): void {
  res.set('WWW-Authenticate', 'Bearer realm="taskgate-admin"');
  res.status(401).json({ error: 'The admin API needs Authorization: Bearer <TASKGATE_ADMIN_TOKEN>' });
}
