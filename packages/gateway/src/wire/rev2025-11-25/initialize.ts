import type { SessionStore } from '@taskgate/core';
import {
  type InitializeResult,
  isSupportedProtocolVersion,
  type JsonRpcRequest,
  LATEST_PROTOCOL_VERSION,
  parseClientRequestParams,
  type ServerCapabilities,
} from '@taskgate/protocol';
import type { Caller } from '../../auth/caller.js';
import type { ResolvedGatewayOptions } from '../../options.js';

/**
 * What the gateway offers every session (CAP-1): tools, resources (with subscriptions) and prompts, each with
 * list-changed news; completions; logging; and tasks for tools/call.
 */
export const SERVER_CAPABILITIES: ServerCapabilities = {
  tools: { listChanged: true },
  resources: { subscribe: true, listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  tasks: { list: {}, cancel: {}, requests: { tools: { call: {} } } },
};

/**
 * `initialize`: negotiates the protocol version (the client's when we speak it, else our latest) and stores a
 * new session bound to the caller's principal. Returns the result and the new session's id.
 */
export async function initialize(
  services: { readonly sessions: SessionStore; readonly options: ResolvedGatewayOptions },
  caller: Caller,
  request: JsonRpcRequest,
): Promise<{ result: InitializeResult; sessionId: string }> {
  const params = parseClientRequestParams('initialize', request.params);
  const protocolVersion = isSupportedProtocolVersion(params.protocolVersion)
    ? params.protocolVersion
    : LATEST_PROTOCOL_VERSION;
  const session = await services.sessions.create({
    ...(caller.principal !== undefined && { principal: caller.principal }),
    protocolVersion,
    clientCapabilities: params.capabilities as Record<string, unknown>,
    clientInfo: params.clientInfo as Record<string, unknown>,
  });
  const { serverInfo, instructions } = services.options;
  return {
    sessionId: session.sessionId,
    result: {
      protocolVersion,
      capabilities: SERVER_CAPABILITIES,
      serverInfo,
      ...(instructions !== undefined && { instructions }),
    },
  };
}
