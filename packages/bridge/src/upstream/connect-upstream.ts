import { connectModern } from './modern-client.js';
import type { UpstreamServerConfig } from './server-config.js';
import { connectLegacy } from './upstream-client.js';
import { type ConnectOptions, LEGACY_REVISION, type UpstreamClient } from './upstream-session.js';

/**
 * A session with `server` on the revision its config asks for: `2025-11-25` with the SDK v1 client; `2026-07-28`
 * with the v2 client; `auto` probes with the v2 client (`server/discover`) and falls back to the v1 client when
 * the server speaks 2025-11-25 only.
 */
export async function connectUpstream(server: UpstreamServerConfig, options: ConnectOptions): Promise<UpstreamClient> {
  const legacy =
    server.protocolVersion === LEGACY_REVISION || options.sessionId !== undefined || options.verdict?.kind === 'legacy';
  if (!legacy) {
    const modern = await connectModern(server, options);
    if (modern !== undefined) return modern;
  }
  return await connectLegacy(server, options);
}
