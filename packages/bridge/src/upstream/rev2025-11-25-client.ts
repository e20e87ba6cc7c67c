import { createInterface } from 'node:readline';
import type { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  McpError,
  ProgressNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { type Logger, traceCarrierOf } from '@taskgate/core';
import { CallRoutes, type RoutedCall } from './call-routes.js';
import { answerRequest, CLIENT_TASKS_CAPABILITY, withoutTask } from './client-task-requests.js';
import { ClientTaskStore } from './client-task-store.js';
import { stdioTransportOptions, type UpstreamServerConfig } from './server-config.js';
import { type ConnectOptions, REV_2025_11_25, type Rev20251125Session } from './upstream-session.js';

/** `_meta` without the upstream's related-task key: the task the client sees is taskgate's, not the upstream's. */
function withoutRelatedTask<P extends object>(params: P): P {
  const all = (params as { _meta?: Record<string, unknown> })._meta;
  if (all === undefined) return params;
  const { 'io.modelcontextprotocol/related-task': _related, ...meta } = all;
  const { _meta: _all, ...rest } = params as { _meta?: unknown };
  return (Object.keys(meta).length > 0 ? { ...rest, _meta: meta } : rest) as P;
}

/** An error the client (or taskgate) answered with, as the JSON-RPC error the upstream gets. */
function asMcpError(error: unknown): McpError {
  if (error instanceof McpError) return error;
  const { code, message, data } = error as { code?: unknown; message?: unknown; data?: unknown };
  const text = typeof message === 'string' ? message : 'The client could not answer';
  return new McpError(typeof code === 'number' ? code : ErrorCode.InternalError, text, data);
}

function routeOrRefuse(routes: CallRoutes, params: unknown): RoutedCall {
  const call = routes.route(params);
  if (call === undefined) {
    throw new McpError(
      ErrorCode.InvalidRequest,
      'taskgate cannot tell which call this request belongs to: several calls share this connection and the ' +
        'request names no task of theirs',
    );
  }
  return call;
}

/** Sends `traceparent` (the active span's) with every HTTP request, so the upstream's spans join the trace. */
export const tracingFetch: FetchLike = (url, init) => {
  const carrier = traceCarrierOf();
  if (carrier === undefined) return fetch(url, init);
  const headers = new Headers(init?.headers);
  headers.set('traceparent', carrier.traceparent);
  if (carrier.tracestate !== undefined) headers.set('tracestate', carrier.tracestate);
  return fetch(url, { ...init, headers });
};

/** Logs each line of a server's stderr with the server's name. */
function logStderr(stream: Readable | null, server: string, logger: Logger): void {
  if (stream === null) return;
  const lines = createInterface({ input: stream, crlfDelay: Number.POSITIVE_INFINITY });
  lines.on('line', (line) => logger.info({ server, stderr: line }, 'upstream stderr'));
}

/**
 * Connects one 2025-11-25 session to `server` with the official SDK v1 client: a new stdio process (its stderr
 * in the bridge's log), or a Streamable HTTP session with only the config's headers. The client declares
 * elicitation, sampling and roots, and answers them by asking taskgate's client through the call's context;
 * elicitation and sampling also as client tasks (CLT-1), kept for this connection only.
 */
export async function connectRev20251125(
  server: UpstreamServerConfig,
  options: ConnectOptions,
): Promise<Rev20251125Session> {
  const { logger } = options;
  const routes = new CallRoutes();
  const tasks = new ClientTaskStore();
  const client = new Client(
    { name: 'taskgate-bridge', version: '0.1.0' },
    {
      capabilities: { elicitation: { form: {}, url: {} }, sampling: {}, roots: {}, tasks: CLIENT_TASKS_CAPABILITY },
      taskStore: tasks,
    },
  );
  const taskDeps = { store: tasks, logger, server: server.name };
  client.setRequestHandler(ElicitRequestSchema, async (request, extra) => {
    const call = routeOrRefuse(routes, request.params);
    const params = withoutTask(withoutRelatedTask(request.params));
    const ask = (signal?: AbortSignal) =>
      call.ctx.elicit(params as never, signal === undefined ? undefined : { signal }).catch((error: unknown) => {
        throw asMcpError(error);
      });
    return (await answerRequest(taskDeps, call, request.params, extra, 'input_required', ask)) as never;
  });
  client.setRequestHandler(CreateMessageRequestSchema, async (request, extra) => {
    const call = routeOrRefuse(routes, request.params);
    const params = withoutTask(withoutRelatedTask(request.params));
    const ask = (signal?: AbortSignal) =>
      call.ctx.sample(params as never, signal === undefined ? undefined : { signal }).catch((error: unknown) => {
        throw asMcpError(error);
      });
    return (await answerRequest(taskDeps, call, request.params, extra, 'working', ask)) as never;
  });
  client.setRequestHandler(ListRootsRequestSchema, async (request) => {
    const call = routeOrRefuse(routes, request.params);
    return await call.ctx.listRoots().catch((error: unknown) => {
      throw asMcpError(error);
    });
  });
  // Progress is routed by the calls' own tokens, in the order it arrives. The SDK's handler (replaced here)
  // runs a microtask after the message is read and drops the handler of a call whose response came in the
  // same read, which loses the last step of a call that reports it just before returning.
  client.setNotificationHandler(ProgressNotificationSchema, async (notification) => {
    const { progressToken, progress, total, message } = notification.params;
    const call = routes.byProgressToken(progressToken);
    if (call !== undefined) await call.ctx.progress(progress, total, message);
  });
  client.setNotificationHandler(LoggingMessageNotificationSchema, async (notification) => {
    const { level, data, logger: name } = notification.params;
    const call = routes.route(notification.params);
    if (call !== undefined) await call.ctx.log(level, data, name);
    else logger.debug({ server: server.name, level }, 'upstream log message of no single call; not relayed');
  });
  const onToolsChanged = options.onToolsChanged;
  if (onToolsChanged !== undefined) {
    client.setNotificationHandler(ToolListChangedNotificationSchema, async () => onToolsChanged());
    client.setNotificationHandler(ResourceListChangedNotificationSchema, async () => onToolsChanged());
    client.setNotificationHandler(PromptListChangedNotificationSchema, async () => onToolsChanged());
  }
  let ended: () => void = () => {};
  const closed = new Promise<void>((resolve) => {
    ended = resolve;
  });
  client.onclose = () => {
    tasks.clear();
    ended();
  };
  client.onerror = (error) => logger.debug({ server: server.name, err: error.message }, 'upstream transport error');
  const common = {
    revision: REV_2025_11_25,
    client,
    sdkV1: client,
    routes,
    closed,
    verdict: { kind: 'legacy' },
  } as const;

  if (server.stdio !== undefined) {
    const transport = new StdioClientTransport(stdioTransportOptions(server.stdio));
    logStderr(transport.stderr as Readable | null, server.name, logger);
    await client.connect(transport);
    return {
      ...common,
      sessionId: undefined,
      pid: transport.pid ?? undefined,
      close: () => client.close(),
    };
  }
  const http = server.http as NonNullable<UpstreamServerConfig['http']>;
  const transport = new StreamableHTTPClientTransport(new URL(http.url), {
    requestInit: { headers: http.headers },
    fetch: tracingFetch,
    ...(options.sessionId !== undefined && { sessionId: options.sessionId }),
  });
  if (options.sessionId !== undefined) transport.setProtocolVersion(REV_2025_11_25);
  await client.connect(transport);
  const close = async (): Promise<void> => {
    await transport.terminateSession().catch(() => {});
    await client.close();
  };
  return { ...common, sessionId: transport.sessionId, pid: undefined, close };
}
