import { connectRev20251125 } from './rev2025-11-25-client.js';
import { connectRev20260728 } from './rev2026-07-28-client.js';
import type { UpstreamServerConfig } from './server-config.js';
import { type ConnectOptions, REV_2025_11_25, type UpstreamClient } from './upstream-session.js';

/**
 * A session with `server` on the revision its config asks for: `2025-11-25` with the SDK v1 client; `2026-07-28`
 * with the v2 client; `auto` probes with the v2 client (`server/discover`) and falls back to the v1 client when
 * the server speaks 2025-11-25 only.
 */
export async function connectUpstream(server: UpstreamServerConfig, options: ConnectOptions): Promise<UpstreamClient> {
  const only20251125 =
    server.protocolVersion === REV_2025_11_25 || options.sessionId !== undefined || options.verdict?.kind === 'legacy';
  if (!only20251125) {
    const session = await connectRev20260728(server, options);
    if (session !== undefined) return session;
  }
  return await connectRev20251125(server, options);
}
