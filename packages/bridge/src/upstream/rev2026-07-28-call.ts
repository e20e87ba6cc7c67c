import {
  type CallToolResult,
  isInputRequiredResult,
  ProtocolError as ProtocolErrorV2,
  SdkError,
  SdkErrorCode,
} from '@modelcontextprotocol/client';
import { ErrorCode, McpError, type Tool as UpstreamTool } from '@modelcontextprotocol/sdk/types.js';
import type { RoutedCall } from './call-routes.js';
import type { UpstreamServerConfig } from './server-config.js';
import type { Rev20260728Session } from './upstream-session.js';

/** Rounds of input one call may ask for before the bridge gives up on it (a loop, not a conversation). */
const MAX_INPUT_ROUNDS = 50;

/** One embedded request of an `input_required` result. */
export interface InputRequest {
  readonly method?: unknown;
  readonly params?: unknown;
}

/** A v2 client error as the v1 error the revision-neutral call path maps (the same codes, the same text). */
export function asV1Error(error: unknown): unknown {
  if (error instanceof SdkError) {
    if (error.code === SdkErrorCode.ConnectionClosed) return new McpError(ErrorCode.ConnectionClosed, error.message);
    if (error.code === SdkErrorCode.RequestTimeout) return new McpError(ErrorCode.RequestTimeout, error.message);
    return error;
  }
  if (error instanceof ProtocolErrorV2) {
    return new McpError(error.code, error.message.replace(/^MCP error -?\d+: /, ''), error.data);
  }
  return error;
}

/** The answer of taskgate's client to one request of the upstream, asked through the call's context. */
export async function answer(call: RoutedCall, key: string, request: InputRequest): Promise<unknown> {
  const { ctx } = call;
  const options = { signal: ctx.signal };
  switch (request.method) {
    case 'elicitation/create':
      return await ctx.elicit(request.params as never, options);
    case 'sampling/createMessage':
      return await ctx.sample(request.params as never, options);
    case 'roots/list':
      return await ctx.listRoots(options);
    default:
      throw new Error(`the upstream asked for input '${key}' with the unknown method ${String(request.method)}`);
  }
}

/**
 * A 2026-07-28 `tools/call`: when the upstream answers `input_required`, each of its `inputRequests` is asked of
 * taskgate's client through the call's context (so its client sees them as on any task) and the call is sent
 * again with the `inputResponses` and the upstream's `requestState`, until the upstream returns its result.
 * Aborting the task's signal sends the upstream `notifications/cancelled` (the SDK does).
 */
export async function callRev20260728(
  session: Rev20260728Session,
  server: UpstreamServerConfig,
  tool: UpstreamTool,
  args: Record<string, unknown>,
  call: RoutedCall,
): Promise<CallToolResult> {
  const { ctx } = call;
  const base = { name: tool.name, arguments: args, _meta: { progressToken: call.progressToken } };
  let params: Record<string, unknown> = base;
  try {
    for (let round = 0; round <= MAX_INPUT_ROUNDS; round += 1) {
      const result = await session.sdkV2.request(
        { method: 'tools/call', params: params as typeof base },
        {
          signal: ctx.signal,
          timeout: server.timeoutMs,
          allowInputRequired: true,
        },
      );
      if (!isInputRequiredResult(result)) return result;
      const requests = Object.entries((result.inputRequests ?? {}) as Record<string, InputRequest>);
      const responses = Object.fromEntries(
        await Promise.all(requests.map(async ([key, request]) => [key, await answer(call, key, request)] as const)),
      );
      params = {
        ...base,
        ...(requests.length > 0 && { inputResponses: responses }),
        ...(result.requestState !== undefined && { requestState: result.requestState }),
      };
    }
  } catch (error) {
    throw asV1Error(error);
  }
  throw new Error(`the upstream asked for input more than ${MAX_INPUT_ROUNDS} times in one call`);
}
