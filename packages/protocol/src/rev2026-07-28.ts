/** Revision 2026-07-28: stateless requests whose `_meta` carries what `initialize` used to negotiate. */
export const REV2026_PROTOCOL_VERSION = '2026-07-28';

/** The protocol revisions a request without a session may name, newest first. */
export const REV2026_PROTOCOL_VERSIONS = [REV2026_PROTOCOL_VERSION] as const;

/** `_meta` keys of a 2026-07-28 request. */
export const META_PROTOCOL_VERSION = 'io.modelcontextprotocol/protocolVersion';
export const META_CLIENT_CAPABILITIES = 'io.modelcontextprotocol/clientCapabilities';
export const META_CLIENT_INFO = 'io.modelcontextprotocol/clientInfo';
export const META_LOG_LEVEL = 'io.modelcontextprotocol/logLevel';
export const META_SERVER_INFO = 'io.modelcontextprotocol/serverInfo';
export const META_SUBSCRIPTION_ID = 'io.modelcontextprotocol/subscriptionId';

/** The tasks extension (SEP-2663), as clients and servers name it under `capabilities.extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** True when `version` is a revision served statelessly. */
export function isRev2026ProtocolVersion(version: unknown): boolean {
  return (REV2026_PROTOCOL_VERSIONS as readonly unknown[]).includes(version);
}
