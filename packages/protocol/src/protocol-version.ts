/** The MCP revision taskgate implements and offers first during version negotiation. */
export const LATEST_PROTOCOL_VERSION = '2025-11-25';

/** Every MCP revision taskgate accepts from a client at initialize, newest first. */
export const SUPPORTED_PROTOCOL_VERSIONS = [LATEST_PROTOCOL_VERSION, '2025-06-18', '2025-03-26', '2024-11-05'] as const;

/** One of {@link SUPPORTED_PROTOCOL_VERSIONS}. */
export type SupportedProtocolVersion = (typeof SUPPORTED_PROTOCOL_VERSIONS)[number];

/** True when `version` is a revision taskgate can speak. */
export function isSupportedProtocolVersion(version: string): version is SupportedProtocolVersion {
  return (SUPPORTED_PROTOCOL_VERSIONS as readonly string[]).includes(version);
}
