/**
 * The wire layer: one codec per protocol revision over one set of revision-neutral method handlers
 * (`methods/`). A codec owns what differs between revisions and nothing else:
 *
 * - how a request arrives: inside a session opened by `initialize` (2025-11-25), or stateless with what
 *   `initialize` negotiated in each request's `_meta` and mirrored in headers (2026-07-28);
 * - which methods exist on its wire (a method outside the list is -32601 by absence);
 * - how params are decoded into a handler's neutral form (always through the protocol package's schemas),
 *   e.g. how a task is asked for: the `task` param, or the tasks extension in `_meta`;
 * - how a handler's `Outcome` is encoded: `CreateTaskResult` with `task` and `ttl`, or flat with
 *   `resultType: "task"` and `ttlMs`; a running call's input requests relayed as server-to-client requests on
 *   a resumable stream, or answered as `input_required` with `inputRequests` and a signed `requestState`.
 *
 * A rule of a method (the `taskSupport` check, argument validation, who may see a task) lives in its handler
 * once; a codec only names which variant of a rule its revision asks for.
 */
import type { Logger } from '@taskgate/core';
import { type JsonRpcMessage, SUPPORTED_PROTOCOL_VERSIONS } from '@taskgate/protocol';
import type { Request, Response } from 'express';
import type { Caller } from '../auth/caller.js';
import { handleSessionMessage } from './rev2025-11-25/session-request.js';
import { isStatelessMessage } from './rev2026-07-28/envelope.js';
import { handleStateless } from './rev2026-07-28/handle.js';
import type { GatewayServices } from './services.js';

/** Answers one parsed message of `POST /mcp` on its revision's wire. */
export type WireCodec = (
  services: GatewayServices,
  req: Request,
  res: Response,
  caller: Caller,
  message: JsonRpcMessage,
  logger: Logger,
) => Promise<void>;

/**
 * The codec of a message: 2026-07-28 for a message without a session whose `_meta` or headers name a
 * stateless revision, 2025-11-25 (sessions) for everything else.
 */
export function codecOf(req: Request, message: JsonRpcMessage): WireCodec {
  return isStatelessMessage(req, message, SUPPORTED_PROTOCOL_VERSIONS) ? handleStateless : handleSessionMessage;
}
