import { ClientRequestSchemas, ErrorCode, isSupportedProtocolVersion } from '@taskgate/protocol';
import fc from 'fast-check';
import { notMessageBody, notObject, notString, unparsableBody } from './bodies.js';
import type { HttpMethod, RpcCall, Spec } from './spec.js';

/** Printable ASCII, the characters a header value may carry without the client refusing it. */
const headerChar = fc.integer({ min: 0x20, max: 0x7e }).map((code) => String.fromCharCode(code));
const headerText = fc.string({ unit: headerChar, maxLength: 40 });
/** Latin-1 beyond ASCII is legal on the wire too (obs-text). */
const obsText = fc.string({
  unit: fc.integer({ min: 0x80, max: 0xff }).map((code) => String.fromCharCode(code)),
  minLength: 1,
  maxLength: 8,
});
const loneSurrogate = fc.integer({ min: 0xd800, max: 0xdfff }).map((code) => String.fromCharCode(code));
/** Strings of every kind: ASCII, any code point, lone surrogates, control characters. */
export const anyString = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.string({ unit: 'binary', maxLength: 30 }),
  fc.string({ unit: fc.oneof(loneSurrogate, fc.string({ minLength: 1, maxLength: 1 })), maxLength: 10 }),
  fc.constantFrom('', ' ', '\u0000', '\n\r', 'NaN', 'Infinity', '__proto__', 'constructor', '*', '{tg}:x', 'a:b:c'),
  // Long ones now and then (a few of them in one message stay under the 64 KiB body limit).
  fc.integer({ min: 257, max: 8_000 }).map((length) => 'x'.repeat(length)),
);
const safeId = fc.oneof(anyString, fc.integer(), fc.maxSafeInteger(), fc.constant(Number.MIN_SAFE_INTEGER));
/** Raw number literals JSON allows but numbers cannot hold (or hold only approximately). */
export const hugeNumber = fc.constantFrom(
  '1e400',
  '-1e400',
  '1e-400',
  '-0',
  '123456789012345678901234567890',
  '9007199254740993',
  '0.1e1',
);

const LOOPBACK = ['localhost', '127.0.0.1', '[::1]'];
function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) return lower.slice(0, lower.indexOf(']') + 1 || undefined);
  const colon = lower.indexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}
function loopbackOrigin(origin: string): boolean {
  try {
    const url = new URL(origin);
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK.includes(url.hostname);
  } catch {
    return false;
  }
}
const anyMethod = fc.constantFrom<HttpMethod>('GET', 'POST', 'DELETE', 'PUT', 'PATCH', 'OPTIONS', 'HEAD');
const mcpMethod = fc.constantFrom<'GET' | 'POST' | 'DELETE'>('GET', 'POST', 'DELETE');

/** The media types of an Accept header as the gateway reads them. */
const acceptLists = (accept: string | undefined, types: readonly string[]): boolean => {
  const listed = new Set((accept ?? '').split(',').map((part) => (part.split(';')[0] ?? '').trim().toLowerCase()));
  return types.every((type) => listed.has(type));
};
const acceptValue = fc.option(
  fc.oneof(
    fc.constantFrom(
      'application/json',
      'text/event-stream',
      '*/*',
      'application/*',
      'text/html',
      '',
      'application/json;q=0',
    ),
    headerText,
  ),
  { nil: undefined },
);

const TOOLS = ['sleep', 'echo', 'report', 'chatty', 'fail'] as const;
const toolArguments = fc.oneof(
  fc.record({ ms: fc.integer({ min: 0, max: 30 }) }),
  fc.record({ text: anyString }),
  fc.record({ pages: fc.integer({ min: -2, max: 3 }), msPerPage: fc.integer({ min: 0, max: 5 }) }),
  fc.record({ steps: fc.integer({ min: 0, max: 3 }) }),
  fc.record({ message: anyString }),
  fc.dictionary(
    anyString.filter((k) => !['ms', 'pages', 'msPerPage', 'steps'].includes(k)),
    fc.jsonValue({ maxDepth: 2 }),
    { maxKeys: 3 },
  ),
);
const realTask = fc.nat().map((real) => ({ $real: 'taskId', ref: { real } }));
const taskId = fc.oneof(realTask, realTask, anyString);
const cursor = fc.option(
  fc.oneof(
    anyString,
    fc.nat().map((real) => ({ $real: 'cursor', ref: { real } })),
    fc.tuple(fc.nat(), fc.nat()).map(([real, tamper]) => ({ $real: 'cursor', ref: { real, tamper } })),
  ),
  { nil: undefined },
);
const list = (method: string): fc.Arbitrary<RpcCall> =>
  cursor.map((c) => ({
    method,
    ...(c !== undefined && { params: { cursor: c } }),
    allow: { result: true, codes: c === undefined ? [] : [ErrorCode.InvalidParams] },
  }));
const { InvalidParams, MethodNotFound, ResourceNotFound } = ErrorCode;
/** Well-shaped requests of every method a session answers, with generated values. */
const rpcCall: fc.Arbitrary<RpcCall> = fc.oneof(
  fc.constant({ method: 'ping', allow: { result: true, codes: [] } }),
  fc
    .constantFrom('debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency')
    .map((level) => ({ method: 'logging/setLevel', params: { level }, allow: { result: true, codes: [] } })),
  list('tools/list'),
  fc
    .record({
      name: fc.oneof(fc.constantFrom(...TOOLS), anyString),
      arguments: toolArguments,
      task: fc.option(fc.oneof(fc.constant({}), fc.record({ ttl: fc.integer({ min: 0, max: 3_600_000 }) })), {
        nil: undefined,
      }),
    })
    .map(({ task, ...params }) => ({
      method: 'tools/call',
      params: { ...params, ...(task !== undefined && { task }) },
      allow: { result: true, codes: [InvalidParams, MethodNotFound] },
    })),
  fc
    .constantFrom('tasks/get', 'tasks/result', 'tasks/cancel')
    .chain((method) =>
      taskId.map((id) => ({ method, params: { taskId: id }, allow: { result: true, codes: [InvalidParams] } })),
    ),
  list('tasks/list'),
  list('resources/list'),
  list('resources/templates/list'),
  list('prompts/list'),
  fc
    .constantFrom('resources/read', 'resources/subscribe', 'resources/unsubscribe')
    .chain((method) =>
      fc
        .oneof(anyString, fc.webUrl())
        .map((uri) => ({ method, params: { uri }, allow: { result: true, codes: [InvalidParams, ResourceNotFound] } })),
    ),
  anyString.map((name) => ({
    method: 'prompts/get',
    params: { name },
    allow: { result: false, codes: [InvalidParams] },
  })),
  fc.record({ name: anyString, value: anyString }).map((argument) => ({
    method: 'completion/complete',
    params: { ref: { type: 'ref/prompt', name: argument.name }, argument },
    allow: { result: true, codes: [InvalidParams] },
  })),
);
/** Params that break the schema of their method (the member named in the message). */
const badParams: fc.Arbitrary<{ method: string; params: unknown }> = fc.oneof(
  anyString
    .filter(
      (level) => !['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'].includes(level),
    )
    .map((level) => ({ method: 'logging/setLevel', params: { level } })),
  notString.map((name) => ({ method: 'tools/call', params: { name } })),
  fc.constant({ method: 'tools/call', params: {} }),
  notObject.map((args) => ({ method: 'tools/call', params: { name: 'echo', arguments: args } })),
  notObject.map((task) => ({ method: 'tools/call', params: { name: 'sleep', arguments: { ms: 1 }, task } })),
  fc.constantFrom('tasks/get', 'tasks/result', 'tasks/cancel').chain((method) =>
    fc.oneof(
      notString.map((taskId) => ({ method, params: { taskId } })),
      fc.constant({ method, params: {} }),
    ),
  ),
  fc
    .constantFrom('tasks/list', 'tools/list', 'resources/list', 'resources/templates/list', 'prompts/list')
    .chain((method) => notString.map((c) => ({ method, params: { cursor: c } }))),
  fc.constantFrom('resources/read', 'resources/subscribe', 'resources/unsubscribe').chain((method) =>
    fc.oneof(
      notString.map((uri) => ({ method, params: { uri } })),
      fc.constant({ method, params: {} }),
    ),
  ),
  fc.oneof(
    notString.map((name) => ({ method: 'prompts/get', params: { name } })),
    fc.constant({ method: 'prompts/get', params: {} }),
  ),
  fc
    .oneof(
      fc.constant({}),
      notObject.map((ref) => ({ ref })),
    )
    .map((params) => ({ method: 'completion/complete', params })),
);
const versionHeader = fc
  .oneof(headerText, fc.constantFrom('2025-11-24', '2024-10-07', 'latest', ''))
  .filter((v) => !isSupportedProtocolVersion(v.trim()));
const sessionHeader = fc.oneof(
  fc.string({ unit: headerChar, minLength: 257, maxLength: 300 }).map((header) => header.replace(/ /g, 'x')),
  fc
    .tuple(
      fc.string({ unit: headerChar, minLength: 1, maxLength: 10 }),
      fc.constantFrom(' ', '\t'),
      fc.string({ unit: headerChar, minLength: 1, maxLength: 10 }),
    )
    .filter(([a, , b]) => a.trim() !== '' && b.trim() !== '')
    .map(([a, gap, b]) => `${a.trim()}${gap}${b.trim()}`),
  obsText,
  fc.constant(''),
  fc.string({
    unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
    minLength: 1,
    maxLength: 64,
  }),
);

/** Every kind of input, the exact ones weighted above chaos. */
export const specArbitrary: fc.Arbitrary<Spec> = fc.oneof(
  fc.record({ kind: fc.constant('method' as const), method: fc.constantFrom('PUT', 'PATCH', 'OPTIONS', 'HEAD') }),
  fc.record({
    kind: fc.constant('host' as const),
    method: anyMethod,
    host: fc.oneof(fc.domain(), headerText).filter((h) => h.trim() !== '' && !LOOPBACK.includes(hostName(h))),
  }),
  fc.record({
    kind: fc.constant('origin' as const),
    method: anyMethod,
    origin: fc
      .oneof(
        fc.webUrl().map((u) => new URL(u).origin),
        headerText,
      )
      .filter((o) => !loopbackOrigin(o)),
  }),
  fc.record(
    {
      kind: fc.constant('auth' as const),
      method: mcpMethod,
      authorization: fc.oneof(
        headerText,
        headerText.map((t) => `Bearer ${t}`),
        fc.constantFrom(
          'Bearer',
          'Bearer ',
          'Basic YWxpY2U6c2VjcmV0',
          'Bearer fuzz-token-alice-0123456789 x',
          'Token fuzz-token-alice-0123456789',
          'Bearer FUZZ-TOKEN-ALICE-0123456789',
          'Bearer fuzz-token-alice-012345678',
        ),
      ),
    },
    { requiredKeys: ['kind', 'method'] },
  ),
  fc.record(
    {
      kind: fc.constant('accept' as const),
      method: fc.constant('POST' as const),
      accept: acceptValue.filter((a) => !acceptLists(a, ['application/json', 'text/event-stream'])),
    },
    { requiredKeys: ['kind', 'method'] },
  ),
  fc.record(
    {
      kind: fc.constant('accept' as const),
      method: fc.constant('GET' as const),
      accept: acceptValue.filter((a) => !acceptLists(a, ['text/event-stream'])),
    },
    { requiredKeys: ['kind', 'method'] },
  ),
  fc.record(
    {
      kind: fc.constant('contentType' as const),
      contentType: fc
        .option(
          fc.oneof(
            headerText,
            fc.constantFrom('text/plain', 'application/jsonp', 'application/json-rpc', 'multipart/form-data'),
          ),
          { nil: undefined },
        )
        .filter((t) => (t ?? '').split(';')[0]?.trim().toLowerCase() !== 'application/json'),
    },
    { requiredKeys: ['kind'] },
  ),
  fc.record({ kind: fc.constant('unparsable' as const), body: unparsableBody }),
  fc.record({ kind: fc.constant('notMessage' as const), body: notMessageBody }),
  fc.record({ kind: fc.constant('tooLarge' as const), extra: fc.integer({ min: 1, max: 100_000 }) }),
  fc.record({
    kind: fc.constant('hugeHeader' as const),
    method: anyMethod,
    size: fc.integer({ min: 17_000, max: 40_000 }),
  }),
  fc.record({
    kind: fc.constant('session' as const),
    method: mcpMethod,
    session: fc.oneof(
      fc.constantFrom('none' as const, 'foreign' as const),
      sessionHeader.map((header) => ({ header })),
    ),
  }),
  fc.record({ kind: fc.constant('version' as const), method: mcpMethod, version: versionHeader }),
  fc.record({
    kind: fc.constant('unknownMethod' as const),
    method: anyString.filter((m) => !Object.hasOwn(ClientRequestSchemas, m)),
    id: safeId,
  }),
  {
    arbitrary: badParams.chain(({ method, params }) =>
      safeId.map((id) => ({ kind: 'badParams' as const, method, params, id })),
    ),
    weight: 3,
  },
  // The methods' own answers, the widest surface, get the most cases.
  { arbitrary: fc.record({ kind: fc.constant('call' as const), call: rpcCall, id: safeId }), weight: 12 },
  fc.record({
    kind: fc.constant('hugeNumber' as const),
    where: fc.constantFrom('id' as const, 'argument' as const, 'ttl' as const, 'progressToken' as const),
    raw: hugeNumber,
  }),
  fc.record(
    {
      kind: fc.constant('notification' as const),
      method: fc.oneof(
        fc.constantFrom('notifications/initialized', 'notifications/progress', 'notifications/cancelled'),
        anyString,
      ),
      params: fc.option(
        fc.record(
          { requestId: safeId, reason: fc.option(anyString, { nil: undefined }) },
          { requiredKeys: ['requestId'] },
        ),
        { nil: undefined },
      ),
    },
    { requiredKeys: ['kind', 'method'] },
  ),
  fc.record({ kind: fc.constant('response' as const), id: safeId, error: fc.boolean() }),
  fc.record(
    {
      kind: fc.constant('get' as const),
      lastEventId: fc.option(fc.oneof(headerText, fc.constant('abc_0-0')), { nil: undefined }),
    },
    { requiredKeys: ['kind'] },
  ),
  fc.constant({ kind: 'delete' as const }),
  fc.record({
    kind: fc.constant('initialize' as const),
    params: fc.oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.record({
        protocolVersion: fc.oneof(fc.constant('2025-11-25'), anyString),
        capabilities: fc.constant({}),
        clientInfo: fc.record({ name: anyString, version: anyString }),
      }),
    ),
    withSession: fc.boolean(),
  }),
  fc.record(
    {
      kind: fc.constant('chaos' as const),
      method: anyMethod,
      headers: fc.dictionary(
        fc.constantFrom(
          'Content-Type',
          'Accept',
          'Mcp-Session-Id',
          'MCP-Protocol-Version',
          'Last-Event-ID',
          'Origin',
          'Authorization',
          'X-Request-Id',
          'Content-Encoding',
        ),
        fc.oneof(headerText, obsText),
        { maxKeys: 4 },
      ),
      session: fc.constantFrom('own' as const, 'foreign' as const, 'none' as const),
      body: fc.option(
        fc.oneof(
          unparsableBody,
          notMessageBody,
          fc.jsonValue({ maxDepth: 3 }).map((v) => JSON.stringify(v)),
        ),
        { nil: undefined },
      ),
    },
    { requiredKeys: ['kind', 'method', 'headers', 'session'] },
  ),
);
