import {
  ErrorCode,
  isRev2026ProtocolVersion,
  type JsonRpcMessage,
  META_CLIENT_CAPABILITIES,
  META_CLIENT_INFO,
  META_LOG_LEVEL,
  META_PROTOCOL_VERSION,
  REV2026_PROTOCOL_VERSIONS,
} from '@taskgate/protocol';
import { headerOf, type WireHeaders, WireRefusal } from '../codec.js';

/** What a stateless request's `_meta` declares: what `initialize` negotiated once per session on 2025-11-25. */
export interface Rev2026Meta {
  readonly protocolVersion: string;
  readonly clientCapabilities: Record<string, unknown>;
  readonly clientInfo?: Record<string, unknown>;
  readonly logLevel?: string;
}

function metaOf(message: JsonRpcMessage): Record<string, unknown> | undefined {
  const params = (message as { params?: unknown }).params;
  const meta = typeof params === 'object' && params !== null ? (params as { _meta?: unknown })._meta : undefined;
  return typeof meta === 'object' && meta !== null && !Array.isArray(meta)
    ? (meta as Record<string, unknown>)
    : undefined;
}

/**
 * True for a message of revision 2026-07-28: no session, and a protocol version in `_meta` or a header naming a
 * version the session wire does not speak. `initialize` belongs to it only when its `_meta` says so (a 2025-11-25
 * client's initialize has none); a request with a session id never does.
 */
export function isRev2026Message(
  headers: WireHeaders,
  message: JsonRpcMessage,
  sessionVersions: readonly string[],
): boolean {
  if (headers['mcp-session-id'] !== undefined) return false;
  if (!('method' in message)) return false;
  const declared = metaOf(message)?.[META_PROTOCOL_VERSION] !== undefined;
  if (message.method === 'initialize') return declared;
  const version = headerOf(headers, 'mcp-protocol-version');
  return declared || (version !== undefined && !sessionVersions.includes(version));
}

/** Which body field `Mcp-Name` mirrors, per method. */
function nameOf(method: string, params: Record<string, unknown>): { field: string; value: unknown } | undefined {
  if (method === 'tools/call' || method === 'prompts/get') return { field: 'params.name', value: params.name };
  if (method === 'resources/read') return { field: 'params.uri', value: params.uri };
  if (method === 'tasks/get' || method === 'tasks/update' || method === 'tasks/cancel') {
    return { field: 'params.taskId', value: params.taskId };
  }
  return undefined;
}

const mismatch = (message: string): WireRefusal => new WireRefusal(400, ErrorCode.HeaderMismatch, message);

/**
 * Checks a stateless request's headers against its body and its `_meta`, in the order the revision asks:
 * `MCP-Protocol-Version` present (-32020), the required `_meta` keys (-32602), the header equal to
 * `_meta.protocolVersion` (-32020), a version served (-32022), then `Mcp-Method` and `Mcp-Name` (-32020).
 */
export function checkEnvelope(headers: WireHeaders, method: string, params: Record<string, unknown>): Rev2026Meta {
  const version = headerOf(headers, 'mcp-protocol-version');
  if (version === undefined) throw mismatch('Header mismatch: the MCP-Protocol-Version header is required');
  const meta = params._meta;
  if (typeof meta !== 'object' || meta === null || Array.isArray(meta)) {
    throw new WireRefusal(400, ErrorCode.InvalidParams, 'Invalid params: params._meta is required on this revision');
  }
  const fields = meta as Record<string, unknown>;
  for (const key of [META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]) {
    if (fields[key] === undefined) {
      throw new WireRefusal(400, ErrorCode.InvalidParams, `Invalid params: params._meta["${key}"] is required`);
    }
  }
  const declared = fields[META_PROTOCOL_VERSION];
  if (declared !== version) {
    throw mismatch('Header mismatch: MCP-Protocol-Version does not match params._meta protocolVersion');
  }
  if (!isRev2026ProtocolVersion(declared)) {
    throw new WireRefusal(
      400,
      ErrorCode.UnsupportedProtocolVersion,
      `Unsupported protocol version: ${String(declared).slice(0, 64)}`,
      { supported: [...REV2026_PROTOCOL_VERSIONS], requested: declared },
    );
  }
  const capabilities = fields[META_CLIENT_CAPABILITIES];
  if (typeof capabilities !== 'object' || capabilities === null || Array.isArray(capabilities)) {
    throw new WireRefusal(
      400,
      ErrorCode.InvalidParams,
      `Invalid params: params._meta["${META_CLIENT_CAPABILITIES}"] must be an object`,
    );
  }
  const methodHeader = headerOf(headers, 'mcp-method');
  if (methodHeader === undefined) throw mismatch('Header mismatch: the Mcp-Method header is required');
  if (methodHeader !== method) throw mismatch(`Header mismatch: Mcp-Method does not match the body's method`);
  const name = nameOf(method, params);
  if (name !== undefined && typeof name.value === 'string') {
    const nameHeader = headerOf(headers, 'mcp-name');
    if (nameHeader === undefined) throw mismatch(`Header mismatch: the Mcp-Name header is required (${name.field})`);
    if (nameHeader.trim() !== name.value) throw mismatch(`Header mismatch: Mcp-Name does not match ${name.field}`);
  }
  const info = fields[META_CLIENT_INFO];
  const level = fields[META_LOG_LEVEL];
  return {
    protocolVersion: declared,
    clientCapabilities: capabilities as Record<string, unknown>,
    ...(typeof info === 'object' && info !== null && { clientInfo: info as Record<string, unknown> }),
    ...(typeof level === 'string' && { logLevel: level }),
  };
}
