/** JSON-RPC 2.0 and MCP error codes that travel on the wire. */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  /** MCP: the server needs the client to complete a URL-mode elicitation first. */
  UrlElicitationRequired: -32042,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];
