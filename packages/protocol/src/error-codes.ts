/** JSON-RPC 2.0 and MCP error codes that travel on the wire. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: `resources/read` (or subscribe) names a resource that no worker offers. */
  ResourceNotFound: -32002,
  /** MCP: the server needs the client to complete a URL-mode elicitation first. */
  UrlElicitationRequired: -32042,
  /**
   * taskgate (server-defined range): the principal exceeded the rate limit of an operation class (SEC-3).
   * `data.retryAfterMs` says when to try again; JSON answers also carry an HTTP `Retry-After` header.
   */
  RateLimited: -32029,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
