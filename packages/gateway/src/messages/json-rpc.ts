import type { JsonRpcErrorObject, RequestId } from '@taskgate/protocol';

/** A JSON-RPC success response. */
export function resultMessage(id: RequestId, result: Record<string, unknown>): Record<string, unknown> {
  return { jsonrpc: '2.0', id, result };
}

/**
 * A JSON-RPC error response. JSON-RPC 2.0 wants an `id` in every response: the request's when it could be
 * read, `null` otherwise (a body that is not JSON, a refusal before the message was parsed).
 */
export function errorResponse(id: RequestId | null | undefined, error: JsonRpcErrorObject): Record<string, unknown> {
  return { jsonrpc: '2.0', id: id ?? null, error };
}
