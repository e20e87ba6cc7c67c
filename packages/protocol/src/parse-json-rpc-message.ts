import type { z } from 'zod';
import { describeIssues } from './describe-issues.js';
import {
  JSONRPC_VERSION,
  JsonRpcErrorResponseSchema,
  type JsonRpcMessage,
  JsonRpcMessageSchema,
  JsonRpcNotificationSchema,
  JsonRpcRequestSchema,
  JsonRpcResultResponseSchema,
} from './jsonrpc.js';
import { ProtocolError } from './protocol-error.js';

/** Says why `value` is not a JSON-RPC message, judged against the kind of message it most looks like. */
function explain(value: unknown): string {
  if (typeof value !== 'object' || value === null) {
    return 'a JSON-RPC message must be a JSON object';
  }
  const members = value as Record<string, unknown>;
  if (members.jsonrpc !== JSONRPC_VERSION) {
    return 'the "jsonrpc" member must be exactly "2.0"';
  }
  let schema: z.ZodType;
  let kind: string;
  if ('method' in members) {
    [schema, kind] = 'id' in members ? [JsonRpcRequestSchema, 'request'] : [JsonRpcNotificationSchema, 'notification'];
  } else if ('result' in members && 'error' in members) {
    return 'a response carries either "result" or "error", never both';
  } else if ('result' in members) {
    [schema, kind] = [JsonRpcResultResponseSchema, 'response'];
  } else if ('error' in members) {
    [schema, kind] = [JsonRpcErrorResponseSchema, 'error response'];
  } else {
    return 'expected a request ("method" and "id"), a notification ("method") or a response ("id" with "result" or "error")';
  }
  const parsed = schema.safeParse(value);
  return parsed.success ? `not a valid ${kind}` : `invalid ${kind}: ${describeIssues(parsed.error)}`;
}

/**
 * Validates one decoded JSON value as a JSON-RPC message. Throws a -32600 `ProtocolError` saying what is
 * wrong; batches (arrays) are refused because MCP 2025-11-25 does not support them. (The gateway refuses a body
 * nesting too deep before it gets here.)
 */
export function parseJsonRpcMessage(value: unknown): JsonRpcMessage {
  if (Array.isArray(value)) {
    throw ProtocolError.invalidRequest(
      'Invalid Request: JSON-RPC batches are not supported; send each message on its own',
    );
  }
  const parsed = JsonRpcMessageSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  throw ProtocolError.invalidRequest(`Invalid Request: ${explain(value)}`);
}
