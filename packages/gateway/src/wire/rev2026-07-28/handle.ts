import type { Logger } from '@taskgate/core';
import { type JsonRpcRequest, REV2026_PROTOCOL_VERSION } from '@taskgate/protocol';
import type { Caller } from '../../auth/caller.js';
import type { Revision, WireHeaders, WireRequest } from '../codec.js';
import { decode, errorStatus } from './codec.js';
import { anonymousOwner, type Rev2026Context, type Rev2026Services } from './context.js';
import { dispatchRev2026 } from './dispatch.js';
import { listen } from './listen.js';

/**
 * Revision 2026-07-28 on `POST /mcp`: no session; the request's `_meta` carries what `initialize` negotiated on
 * 2025-11-25. The envelope is checked first (headers against the body), then the method runs with the caller's
 * principal as owner (auth on) or a fresh anonymous owner (auth off). Errors keep the request's id; those the
 * revision gives an HTTP status answer with it (400, 404). Notifications and responses get 202 and nothing else.
 */
export const rev20260728: Revision<Rev2026Services> = {
  errorStatus,
  accept: async () => {},
  open: openRequest,
};

async function openRequest(
  services: Rev2026Services,
  headers: WireHeaders,
  caller: Caller,
  request: JsonRpcRequest,
  parent: Logger,
): Promise<WireRequest> {
  const { id, method, meta, params, paramHeaders } = decode(headers, request);
  const owner = caller.principal ?? anonymousOwner();
  const session = {
    sessionId: '',
    protocolVersion: meta.protocolVersion,
    clientCapabilities: meta.clientCapabilities,
    ...(meta.clientInfo !== undefined && { clientInfo: meta.clientInfo }),
    createdAt: 0,
  };
  const logger = parent.child({ rpc: method, wire: REV2026_PROTOCOL_VERSION });
  const base: Omit<Rev2026Context, 'answer'> = {
    services,
    session,
    owner,
    ...(caller.principal !== undefined && { principal: caller.principal }),
    logger,
    request,
    // With auth off a task is found by its unguessable id; with auth on, it is the principal's.
    tasksBy: caller.principal === undefined ? 'id' : 'record',
    stamp: REV2026_PROTOCOL_VERSION,
    inlineInput: true,
    meta,
    anonymous: caller.principal === undefined,
    params: paramHeaders,
  };
  return {
    id,
    method,
    owner,
    logger,
    mayStream: false,
    run: async (channel) => {
      const ctx: Rev2026Context = { ...base, answer: channel };
      if (method === 'subscriptions/listen') {
        await listen(ctx, channel, id, params);
        return { kind: 'streamed' };
      }
      return { kind: 'result', result: await dispatchRev2026(ctx, params, channel.signal) };
    },
  };
}
