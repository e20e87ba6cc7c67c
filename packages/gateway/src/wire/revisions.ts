import { type JsonRpcMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@taskgate/protocol';
import type { Revision, WireHeaders } from './codec.js';
import type { SessionServices } from './rev2025-11-25/dispatch.js';
import { rev20251125 } from './rev2025-11-25/session-request.js';
import type { Rev2026Services } from './rev2026-07-28/context.js';
import { isRev2026Message } from './rev2026-07-28/envelope.js';
import { rev20260728 } from './rev2026-07-28/handle.js';

/** What the codecs of both revisions use. */
export type RevisionServices = SessionServices & Rev2026Services;

/**
 * The revision of a message: 2026-07-28 for a message without a session whose `_meta` or headers name a
 * stateless revision, 2025-11-25 (sessions) for everything else.
 */
export function revisionOf(headers: WireHeaders, message: JsonRpcMessage): Revision<RevisionServices> {
  return isRev2026Message(headers, message, SUPPORTED_PROTOCOL_VERSIONS) ? rev20260728 : rev20251125;
}
