import { META_SERVER_INFO, REV2026_PROTOCOL_VERSIONS, TASKS_EXTENSION } from '@taskgate/protocol';
import type { ResolvedGatewayOptions } from '../../options.js';

/** What the server offers on revision 2026-07-28; `subscriptions/listen` carries the list-changed news. */
export const REV2026_CAPABILITIES = {
  tools: { listChanged: true },
  resources: { listChanged: true },
  prompts: { listChanged: true },
  completions: {},
  logging: {},
  extensions: { [TASKS_EXTENSION]: {} },
} as const;

/** `server/discover`: the versions served statelessly, the capabilities (tasks extension included), who we are. */
export function discover(options: ResolvedGatewayOptions): Record<string, unknown> {
  const { serverInfo, instructions } = options;
  return {
    resultType: 'complete',
    supportedVersions: [...REV2026_PROTOCOL_VERSIONS],
    capabilities: REV2026_CAPABILITIES,
    ...(instructions !== undefined && { instructions }),
    ttlMs: 0,
    cacheScope: 'public',
    _meta: { [META_SERVER_INFO]: serverInfo },
  };
}
