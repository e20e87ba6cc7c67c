import { isSupportedProtocolVersion } from '@taskgate/protocol';
import { HttpError } from '../../messages/http-error.js';
import type { WireHeaders } from '../codec.js';

/** The protocol revision to assume when a request carries no MCP-Protocol-Version header (transport spec). */
export const DEFAULT_HEADER_PROTOCOL_VERSION = '2025-03-26';

/** The MCP-Protocol-Version of a request after initialize: 400 when unsupported, the default when absent. */
export function requestProtocolVersion(headers: WireHeaders): string {
  const header = headers['mcp-protocol-version'];
  if (header === undefined) return DEFAULT_HEADER_PROTOCOL_VERSION;
  const version = Array.isArray(header) ? header[0] : header;
  if (version === undefined || !isSupportedProtocolVersion(version)) {
    throw HttpError.badRequest(`Bad Request: unsupported MCP-Protocol-Version '${String(version)}'`);
  }
  return version;
}
