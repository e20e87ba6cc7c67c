import { ErrorCode } from './error-catalogue.js';
import type { JsonRpcErrorObject } from './jsonrpc.js';

export type { JsonRpcErrorObject } from './jsonrpc.js';

/**
 * The one error that goes on the wire: a numeric JSON-RPC code, a message that says what went wrong and
 * what to do, and optional data. Internal failures use other error classes and are mapped once, at the
 * boundary, by `toJsonRpcError`.
 */
export class ProtocolError extends Error {
  override readonly name = 'ProtocolError';

  constructor(
    readonly code: number,
    message: string,
    readonly data?: unknown,
  ) {
    super(message);
  }

  /** The JSON-RPC `error` member for this error. */
  toJSON(): JsonRpcErrorObject {
    return this.data === undefined
      ? { code: this.code, message: this.message }
      : { code: this.code, message: this.message, data: this.data };
  }

  /** -32602: the params of a known method are missing or of the wrong type. */
  static invalidParams(message: string, data?: unknown): ProtocolError {
    return new ProtocolError(ErrorCode.InvalidParams, message, data);
  }

  /** -32601: unknown method, or a task-augmentation mismatch on a tool (TOOL-3, TOOL-5). */
  static methodNotFound(message: string, data?: unknown): ProtocolError {
    return new ProtocolError(ErrorCode.MethodNotFound, message, data);
  }

  /** -32600: the message is not a valid JSON-RPC request. */
  static invalidRequest(message: string, data?: unknown): ProtocolError {
    return new ProtocolError(ErrorCode.InvalidRequest, message, data);
  }

  /** -32603: something failed on our side; the message must not leak internals. */
  static internal(message = 'Internal error', data?: unknown): ProtocolError {
    return new ProtocolError(ErrorCode.InternalError, message, data);
  }
}

/**
 * Maps anything thrown to the JSON-RPC error a client may see. A `ProtocolError` passes through; every
 * other throwable becomes -32603 without leaking its message (it may hold internals or secrets).
 */
export function toJsonRpcError(error: unknown): JsonRpcErrorObject {
  if (error instanceof ProtocolError) return error.toJSON();
  return { code: ErrorCode.InternalError, message: 'Internal error' };
}
