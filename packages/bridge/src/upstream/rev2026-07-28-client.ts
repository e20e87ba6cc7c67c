import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Logger } from '@taskgate/core';
import { CallRoutes } from './call-routes.js';
import { tracingFetch } from './rev2025-11-25-client.js';
import { RawRequests, TASKS_EXTENSION } from './rev2026-07-28-raw.js';
import { servesListen } from './rev2026-07-28-watch.js';
import { stdioTransportOptions, type UpstreamServerConfig } from './server-config.js';
import {
  type ConnectOptions,
  REV_2026_07_28,
  type Rev20260728Session,
  type UpstreamRequests,
} from './upstream-session.js';

/**
 * How long `server/discover` may take (ms). On stdio it includes the server's start (a Python server under load
 * takes seconds), and a server silent that long is taken to speak 2025-11-25 only; on HTTP silence is an outage.
 */
const PROBE_TIMEOUT_MS = { stdio: 30_000, http: 10_000 };

/** The v2 client as the revision-neutral requests: the catalog and reads are read fresh (no response cache). */
function requestsOf(client: Client): UpstreamRequests {
  const fresh = { cacheMode: 'bypass' } as const;
  return {
    getServerCapabilities: () => client.getServerCapabilities() as never,
    listTools: (params, options) => client.listTools(params, { ...options, ...fresh }) as never,
    listResources: (params, options) => client.listResources(params, { ...options, ...fresh }) as never,
    listResourceTemplates: (params, options) => client.listResourceTemplates(params, { ...options, ...fresh }) as never,
    listPrompts: (params, options) => client.listPrompts(params, { ...options, ...fresh }) as never,
    readResource: (params, options) => client.readResource(params, { ...options, ...fresh }) as never,
    getPrompt: (params, options) => client.getPrompt(params as never, options) as never,
    // 2026-07-28 has no ping: server/discover is the one request every server answers at any time.
    ping: (options) => client.discover(options) as never,
    close: () => client.close(),
  };
}

/**
 * Each line of a server's stderr, held until `keep` (then logged with the server's name, from the first line) or
 * `drop`: the process `auto` started before it knew the revision is not the server's, when it speaks 2025-11-25.
 */
function heldStderr(stream: Readable | null, server: string, logger: Logger) {
  let held: string[] | undefined = [];
  const log = (line: string): void => logger.info({ server, stderr: line }, 'upstream stderr');
  if (stream !== null) {
    const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
    lines.on('line', (line) => (held === undefined ? log(line) : held.push(line)));
  }
  return {
    keep: (): void => {
      for (const line of held ?? []) log(line);
      held = undefined;
    },
    drop: (): void => {
      held = [];
    },
  };
}

/**
 * A 2026-07-28 session with `server` through the SDK v2 client, or undefined when `protocolVersion` is `auto`
 * and the server speaks 2025-11-25 only (the probe's session is closed again). The client handles no request
 * of the server: on 2026-07-28 an upstream asks for input in `input_required` results, answered per call
 * (rev2026-07-28-call.ts). Progress and log messages reach the call they name, as on 2025-11-25.
 */
export async function connectRev20260728(
  server: UpstreamServerConfig,
  options: ConnectOptions,
): Promise<Rev20260728Session | undefined> {
  const { logger, verdict } = options;
  const routes = new CallRoutes();
  const onToolsChanged = options.onToolsChanged;
  const changed = { autoRefresh: false, debounceMs: 0, onChanged: () => onToolsChanged?.() };
  const info = { name: 'taskgate-bridge', version: '0.1.0' };
  const capabilities = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };
  const client = new Client(info, {
    capabilities,
    versionNegotiation: {
      mode: server.protocolVersion === REV_2026_07_28 ? { pin: REV_2026_07_28 } : 'auto',
      probe: { timeoutMs: server.stdio !== undefined ? PROBE_TIMEOUT_MS.stdio : PROBE_TIMEOUT_MS.http },
    },
    inputRequired: { autoFulfill: false },
    ...(onToolsChanged !== undefined && {
      listChanged: { tools: changed, resources: changed, prompts: changed },
    }),
  });
  client.setNotificationHandler('notifications/progress', async (notification) => {
    const { progressToken, progress, total, message } = notification.params;
    const call = routes.byProgressToken(progressToken);
    if (call !== undefined) await call.ctx.progress(progress, total, message);
  });
  client.setNotificationHandler('notifications/message', async (notification) => {
    const { level, data, logger: name } = notification.params;
    const call = routes.route(notification.params);
    if (call !== undefined) await call.ctx.log(level, data, name);
    else logger.debug({ server: server.name, level }, 'upstream log message of no single call; not relayed');
  });
  let ended: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  client.onclose = () => ended();
  client.onerror = (error) => logger.debug({ server: server.name, err: error.message }, 'upstream transport error');
  const connectOptions = verdict?.kind === 'modern' ? { prior: verdict } : {};

  let pid: number | undefined;
  let terminate = async (): Promise<void> => {};
  let stderr: ReturnType<typeof heldStderr> | undefined;
  let transport: StdioClientTransport | StreamableHTTPClientTransport;
  if (server.stdio !== undefined) {
    const stdio = new StdioClientTransport(stdioTransportOptions(server.stdio));
    transport = stdio;
    stderr = heldStderr(stdio.stderr as Readable | null, server.name, logger);
    await client.connect(stdio, connectOptions).catch((error: unknown) => {
      stderr?.keep();
      throw error;
    });
    pid = stdio.pid ?? undefined;
  } else {
    const http = server.http as NonNullable<UpstreamServerConfig['http']>;
    const remote = new StreamableHTTPClientTransport(new URL(http.url), {
      requestInit: { headers: http.headers },
      fetch: tracingFetch,
    });
    transport = remote;
    await client.connect(remote, connectOptions);
    terminate = () => remote.terminateSession().catch(() => {});
  }
  const discover = client.getDiscoverResult();
  if (client.getProtocolEra() !== 'modern' || discover === undefined) {
    // `auto` against a 2025-11-25 server: the v1 client takes it from here.
    stderr?.drop();
    await terminate();
    await client.close().catch(() => {});
    return undefined;
  }
  stderr?.keep();
  const extensions = (discover.capabilities as { extensions?: Record<string, unknown> }).extensions;
  return {
    revision: REV_2026_07_28,
    client: requestsOf(client),
    sdkV2: client,
    tasks: extensions?.[TASKS_EXTENSION] === undefined ? undefined : new RawRequests(transport, info, capabilities),
    listens: servesListen(discover.capabilities as Record<string, unknown>),
    routes,
    sessionId: undefined,
    pid,
    closed,
    verdict: { kind: 'modern', discover },
    close: () => client.close(),
  };
}
