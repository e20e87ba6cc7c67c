/**
 * The error catalogue: every JSON-RPC error code taskgate answers with, standard or its own, in one place. Source
 * code names codes only through `ErrorCode`; the reference page's table of codes is printed from `ERROR_CATALOGUE`
 * (`scripts/doc-tables.ts` writes it into docs/reference/errors.md; a test keeps the two equal).
 */
export const ErrorCode = {
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  ResourceNotFound: -32002,
  UrlElicitationRequired: -32042,
  SessionNotFound: -32001,
  TaskLimitExceeded: -32010,
  SessionLimitExceeded: -32011,
  StreamLimitExceeded: -32012,
  RateLimited: -32029,
  HeaderMismatch: -32020,
  MissingClientCapability: -32021,
  UnsupportedProtocolVersion: -32022,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

export type ErrorCodeName = keyof typeof ErrorCode;

/** Who defines a code: JSON-RPC 2.0 itself, the MCP specification, or taskgate (the server-defined range). */
export type ErrorOrigin = 'JSON-RPC' | 'MCP' | 'taskgate';

export interface ErrorCatalogueEntry {
  readonly name: ErrorCodeName;
  readonly code: ErrorCode;
  readonly origin: ErrorOrigin;
  /** When a client gets it and what to do about it. */
  readonly meaning: string;
  /**
   * The HTTP statuses it comes with. 200 means inside a JSON-RPC response (JSON or on an SSE stream); any other
   * status is a refusal at the HTTP level, whose body is a JSON-RPC error without an id.
   */
  readonly http: readonly number[];
}

type Described = Omit<ErrorCatalogueEntry, 'name' | 'code'>;

const DESCRIBED: { readonly [Name in ErrorCodeName]: Described } = {
  ParseError: {
    origin: 'JSON-RPC',
    meaning: 'the POST body is empty, unreadable or not JSON',
    http: [400],
  },
  InvalidRequest: {
    origin: 'JSON-RPC',
    meaning:
      'the request is refused before any method runs: not a JSON-RPC message, a body nested deeper than 64 ' +
      'levels, a missing or wrong header, no or a bad token (401/403 with `WWW-Authenticate`), a token in the ' +
      'URL (400 `invalid_request`), a forbidden Host or Origin, a body too large, a second GET stream of a ' +
      'session, events to resume from that expired, or HTTP the server cannot read (408 too slow, 431 headers ' +
      'too large)',
    http: [400, 401, 403, 405, 406, 408, 409, 410, 413, 415, 431],
  },
  MethodNotFound: {
    origin: 'JSON-RPC',
    meaning:
      'a method the server does not answer, or a tool called as a task when it does not support tasks, or ' +
      'called without one when it requires one (TOOL-3, TOOL-5)',
    http: [200],
  },
  InvalidParams: {
    origin: 'JSON-RPC',
    meaning:
      'the params do not fit the method (the message names the member), an unknown, expired or foreign task, a ' +
      'bad cursor, cancelling a finished task (ERR-1); with HTTP 400, a response to no pending request',
    http: [200, 400],
  },
  InternalError: {
    origin: 'JSON-RPC',
    meaning:
      'something failed on the server side, or no worker answered a read in time; with HTTP 503 the gateway ' +
      'is shutting down, cannot load its signing keys, Redis does not answer or its replicas did not confirm a ' +
      'new task (nothing was created) or a cancel in time (`TASKGATE_REDIS_WAIT_REPLICAS`): retry (`Retry-After`)',
    http: [200, 500, 503],
  },
  ResourceNotFound: {
    origin: 'MCP',
    meaning:
      '`resources/read` or `resources/subscribe` of a URI that no live worker offers (on 2026-07-28: -32602 instead, ' +
      'SEP-2164)',
    http: [200],
  },
  UrlElicitationRequired: {
    origin: 'MCP',
    meaning: 'a tool needs the user to complete a URL-mode elicitation first; passed on as the tool raised it',
    http: [200],
  },
  SessionNotFound: {
    origin: 'taskgate',
    meaning:
      'the `Mcp-Session-Id` is unknown, ended, expired or another principal’s: start a new session with initialize',
    http: [404],
  },
  TaskLimitExceeded: {
    origin: 'taskgate',
    meaning: 'the owner already has the most tasks working or waiting for input that it may have (`data.limit`)',
    http: [200],
  },
  SessionLimitExceeded: {
    origin: 'taskgate',
    meaning:
      '`initialize` of a principal that already has the most sessions it may have (`data.limit`): end one ' +
      '(DELETE) or wait for an idle one to expire',
    http: [200],
  },
  StreamLimitExceeded: {
    origin: 'taskgate',
    meaning:
      'the principal already has the most SSE streams it may have open on this gateway: a `tasks/result` or ' +
      'direct call answered as a stream gets it in a JSON-RPC response (`data.limit`, `data.retryAfterMs`), a ' +
      'GET stream with HTTP 429; both with `Retry-After`',
    http: [200, 429],
  },
  RateLimited: {
    origin: 'taskgate',
    meaning: 'the principal exceeded a rate limit (SEC-3); retry after `data.retryAfterMs` (also `Retry-After`)',
    http: [200],
  },
  HeaderMismatch: {
    origin: 'MCP',
    meaning:
      'revision 2026-07-28: the `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` header is missing or does ' +
      'not match the body',
    http: [400],
  },
  MissingClientCapability: {
    origin: 'MCP',
    meaning:
      'revision 2026-07-28: the request needs a client capability its `_meta` does not declare ' +
      '(`data.requiredCapabilities`, e.g. the tasks extension for `tasks/get`)',
    http: [400],
  },
  UnsupportedProtocolVersion: {
    origin: 'MCP',
    meaning:
      'revision 2026-07-28: the request names a protocol version the server does not serve statelessly ' +
      '(`data.supported`, `data.requested`)',
    http: [400],
  },
};

/** Every code of {@link ErrorCode} with its name, origin, meaning and HTTP statuses, in `ErrorCode` order. */
export const ERROR_CATALOGUE: readonly ErrorCatalogueEntry[] = (Object.keys(ErrorCode) as ErrorCodeName[]).map(
  (name) => ({ name, code: ErrorCode[name], ...DESCRIBED[name] }),
);
