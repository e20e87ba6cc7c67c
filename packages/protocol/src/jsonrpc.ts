import { z } from 'zod';
import { BaseNotificationParamsSchema, BaseRequestParamsSchema, ResultSchema } from './message-base.js';

/** The only JSON-RPC version MCP speaks. */
export const JSONRPC_VERSION = '2.0';

const JsonRpcVersionSchema = z.literal(JSONRPC_VERSION, { error: 'must be exactly "2.0"' });

/** A request id: a string or an integer. MCP forbids `null` ids and fractional numbers. */
export const RequestIdSchema = z.union([z.string(), z.number().int()], {
  error: 'must be a string or an integer (null is not allowed)',
});
/** A JSON-RPC request id. */
export type RequestId = z.infer<typeof RequestIdSchema>;

/**
 * A request that expects a response. The envelope is closed (unknown top-level members are refused); the
 * params are open so that method-specific schemas can judge them and nothing is lost on forwarding.
 */
export const JsonRpcRequestSchema = z.strictObject({
  jsonrpc: JsonRpcVersionSchema,
  id: RequestIdSchema,
  method: z.string({ error: 'must be a string' }),
  params: BaseRequestParamsSchema.loose().optional(),
});
/** A JSON-RPC request. */
export type JsonRpcRequest = z.infer<typeof JsonRpcRequestSchema>;

/** A one-way message without an id. Closed envelope, open params. */
export const JsonRpcNotificationSchema = z.strictObject({
  jsonrpc: JsonRpcVersionSchema,
  method: z.string({ error: 'must be a string' }),
  params: BaseNotificationParamsSchema.loose().optional(),
});
/** A JSON-RPC notification. */
export type JsonRpcNotification = z.infer<typeof JsonRpcNotificationSchema>;

/** A successful response. Closed envelope, open result. */
export const JsonRpcResultResponseSchema = z.strictObject({
  jsonrpc: JsonRpcVersionSchema,
  id: RequestIdSchema,
  result: ResultSchema,
});
/** A successful JSON-RPC response. */
export type JsonRpcResultResponse = z.infer<typeof JsonRpcResultResponseSchema>;

/** The `error` member of an error response. */
export const JsonRpcErrorObjectSchema = z.object({
  code: z.number().int(),
  message: z.string(),
  data: z.unknown().optional(),
});
/** The body of a JSON-RPC error response: what a client sees. */
export type JsonRpcErrorObject = z.infer<typeof JsonRpcErrorObjectSchema>;

/**
 * An error response. `id` may be absent (the request could not be read) but, as in the MCP schema, never
 * `null`.
 */
export const JsonRpcErrorResponseSchema = z.strictObject({
  jsonrpc: JsonRpcVersionSchema,
  id: RequestIdSchema.optional(),
  error: JsonRpcErrorObjectSchema,
});
/** A JSON-RPC error response. */
export type JsonRpcErrorResponse = z.infer<typeof JsonRpcErrorResponseSchema>;

/** Either kind of response. */
export const JsonRpcResponseSchema = z.union([JsonRpcResultResponseSchema, JsonRpcErrorResponseSchema]);
/** A JSON-RPC response, successful or not. */
export type JsonRpcResponse = z.infer<typeof JsonRpcResponseSchema>;

/** Any single JSON-RPC message. Batches (arrays) are not messages: MCP 2025-11-25 has none. */
export const JsonRpcMessageSchema = z.union([
  JsonRpcRequestSchema,
  JsonRpcNotificationSchema,
  JsonRpcResultResponseSchema,
  JsonRpcErrorResponseSchema,
]);
/** A single JSON-RPC message. */
export type JsonRpcMessage = z.infer<typeof JsonRpcMessageSchema>;

/** Narrows a parsed message to a request (it has both `method` and `id`). */
export function isJsonRpcRequest(message: JsonRpcMessage): message is JsonRpcRequest {
  return 'method' in message && 'id' in message;
}

/** Narrows a parsed message to a notification (it has `method` and no `id`). */
export function isJsonRpcNotification(message: JsonRpcMessage): message is JsonRpcNotification {
  return 'method' in message && !('id' in message);
}

/** Narrows a parsed message to a successful response. */
export function isJsonRpcResultResponse(message: JsonRpcMessage): message is JsonRpcResultResponse {
  return 'result' in message;
}

/** Narrows a parsed message to an error response. */
export function isJsonRpcErrorResponse(message: JsonRpcMessage): message is JsonRpcErrorResponse {
  return 'error' in message;
}
