import type { Logger } from '@taskgate/core';
import { Keys, type SessionRecord, SessionStore } from '@taskgate/core';
import type { Caller } from '../../auth/caller.js';
import { HttpError } from '../../messages/http-error.js';
import type { WireHeaders } from '../codec.js';

/** The established session of a request and the owner its tasks belong to. */
export interface ResolvedSession {
  readonly session: SessionRecord;
  readonly owner: string;
}

/**
 * The session named by Mcp-Session-Id: 400 when the header is missing or malformed, 404 when the session is
 * unknown, ended, expired or bound to another principal (indistinguishable on purpose).
 */
export async function requireSession(
  services: { readonly sessions: SessionStore },
  headers: WireHeaders,
  caller: Caller,
  logger: Logger,
): Promise<ResolvedSession> {
  const header = headers['mcp-session-id'];
  if (header === undefined) {
    throw HttpError.badRequest('Bad Request: the Mcp-Session-Id header is required; send initialize first');
  }
  const sessionId = Array.isArray(header) ? (header[0] ?? '') : header;
  if (!/^[\x21-\x7e]{1,256}$/.test(sessionId)) {
    throw HttpError.badRequest('Bad Request: Mcp-Session-Id must be 1-256 visible ASCII characters');
  }
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
