import type { Client as ClientV2, DiscoverResult } from '@modelcontextprotocol/client';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Logger } from '@taskgate/core';
import type { CallRoutes } from './call-routes.js';
import type { RawRequests } from './rev2026-07-28-raw.js';

export const REV_2025_11_25 = '2025-11-25';
export const REV_2026_07_28 = '2026-07-28';

/**
 * What a session answers the same way on every revision: the catalog (tools, resources, prompts), reads,
 * ping and close. The SDK v1 client is one; a 2026-07-28 session adapts the v2 client to it.
 */
export type UpstreamRequests = Pick<
  Client,
  | 'getServerCapabilities'
  | 'listTools'
  | 'listResources'
  | 'listResourceTemplates'
  | 'listPrompts'
  | 'readResource'
  | 'getPrompt'
  | 'ping'
  | 'close'
>;

/**
 * Which revision a server spoke when it was first reached: later sessions (restarts, HTTP calls) skip the probe.
 * The kinds are the SDK v2's own (`connect({ prior })`): `legacy` is 2025-11-25, `modern` is 2026-07-28.
 */
export type Verdict = { readonly kind: 'legacy' } | { readonly kind: 'modern'; readonly discover: DiscoverResult };

interface SessionCommon {
  /** The revision-neutral requests (catalog, reads, ping). */
  readonly client: UpstreamRequests;
  /** The calls in flight on this session, for routing what the upstream asks or logs. */
  readonly routes: CallRoutes;
  /** The Streamable HTTP session id (2025-11-25 over HTTP only). */
  readonly sessionId: string | undefined;
  /** The server process (stdio only). */
  readonly pid: number | undefined;
  /** Resolves when the session ends (the process exited, the connection closed). */
  readonly closed: Promise<void>;
  readonly verdict: Verdict;
  close(): Promise<void>;
}

/** A 2025-11-25 session: the SDK v1 client (calls, upstream tasks, subscriptions). */
export interface Rev20251125Session extends SessionCommon {
  readonly revision: typeof REV_2025_11_25;
  readonly sdkV1: Client;
}

/** A 2026-07-28 session: the SDK v2 client, input asked in `input_required` results. */
export interface Rev20260728Session extends SessionCommon {
  readonly revision: typeof REV_2026_07_28;
  readonly sdkV2: ClientV2;
  /** The tasks extension's requests, when the server offers the extension. */
  readonly tasks: RawRequests | undefined;
  /** Whether the server serves `subscriptions/listen` (its `server/discover` capabilities say so). */
  readonly listens: boolean;
}

/** One MCP client session with an upstream server: a stdio process or a Streamable HTTP session. */
export type UpstreamClient = Rev20251125Session | Rev20260728Session;

export interface ConnectOptions {
  readonly logger: Logger;
  /** Told when the upstream announces that its tools, resources or prompts changed (`list_changed`). */
  readonly onToolsChanged?: () => void;
  /** Resume this 2025-11-25 Streamable HTTP session instead of starting one (no initialize). */
  readonly sessionId?: string;
  /** The revision the server spoke before (skips the probe). */
  readonly verdict?: Verdict;
}
