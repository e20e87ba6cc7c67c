import type { Logger } from '@taskgate/core';
import { Keys, type SessionRecord, SessionStore } from '@taskgate/core';
import type { Caller } from '../../auth/caller.js';
import { HttpError } from '../../messages/http-error.js';
import type { WireHeaders } from '../codec.js';
import { sessionIdOf } from './codec.js';

/** The established session of a request and the owner its tasks belong to. */
export interface ResolvedSession {
  readonly session: SessionRecord;
  readonly owner: string;
}

/**
 * The session named by Mcp-Session-Id: 400 when the header is missing or malformed, 404 when the session is
 * unknown, ended, expired or bound to another principal (indistinguishable on purpose).
 */
export function requireSession(
  services: { readonly sessions: SessionStore },
  headers: WireHeaders,
  caller: Caller,
  logger: Logger,
): Promise<ResolvedSession> {
  return findSession(services, sessionIdOf(headers), caller, logger);
}

/** The session of a well-formed session id (see `requireSession`). */
export async function findSession(
  services: { readonly sessions: SessionStore },
  sessionId: string,
  caller: Caller,
  logger: Logger,
): Promise<ResolvedSession> {
  const session = await services.sessions.get(sessionId, caller.principal);
  if (session === undefined || !SessionStore.belongsTo(session, caller.principal)) {
    logger.warn(
      { audit: 'session.not_found', session: Keys.digest(sessionId).slice(0, 12), principal: caller.principal },
      session === undefined ? 'unknown session' : 'session of another principal',
    );
    throw HttpError.sessionNotFound();
  }
  return { session, owner: caller.principal ?? session.sessionId };
}
