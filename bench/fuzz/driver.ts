import { Agent, request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import { ERROR_CATALOGUE } from '@taskgate/protocol';
import fc from 'fast-check';
import { specArbitrary } from './arbitraries.js';
import { type FuzzCase, type FuzzRequest, materialize, type World } from './cases.js';
import { FUZZ_TOKENS } from './target.js';

/** What came back for one request; an SSE answer to a GET is cut after its headers (it never ends). */
export interface FuzzResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly text: string;
}

/** Longest a request may take before the case fails (a direct call's stream included). */
export const REQUEST_TIMEOUT_MS = 15_000;

/** Sends one request over `agent` (keep-alive); rejects when no answer arrives within the timeout. */
export function send(url: string, request: FuzzRequest, agent: Agent): Promise<FuzzResponse> {
  return new Promise((resolve, reject) => {
    // Node frames a GET, DELETE or OPTIONS body only when told its length (else it would be the next request).
    const length = request.body === undefined ? {} : { 'Content-Length': String(Buffer.byteLength(request.body)) };
    const headers = { ...length, ...request.headers };
    const req = httpRequest(url, { method: request.method, headers, agent }, (res) => {
      const type = String(res.headers['content-type'] ?? '');
      if (request.method === 'GET' && type.startsWith('text/event-stream')) {
        res.destroy();
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '' });
        return;
      }
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }),
      );
      res.on('error', reject);
    });
    req.setTimeout(REQUEST_TIMEOUT_MS, () => {
      req.destroy(new Error(`no answer within ${REQUEST_TIMEOUT_MS} ms`));
    });
    req.on('error', reject);
    req.end(request.body);
  });
}

const CATALOGUE = new Map(ERROR_CATALOGUE.map((entry) => [entry.code as number, entry]));

function sseMessages(text: string): unknown[] {
  return text
    .split('\n')
    .filter((line) => line.startsWith('data:') && line.slice(5).trim() !== '')
    .map((line) => JSON.parse(line.slice(5)));
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/**
 * The oracle: throws, saying why, unless the response is the one the case is owed. Always: the status is one
 * the case allows (never a 5xx), a body is JSON-RPC 2.0, an error code is in the catalogue with this status
 * among its HTTP statuses, an HTTP-level refusal carries no id, a JSON-RPC response carries the request's id.
 */
export function check(fuzzCase: FuzzCase, response: FuzzResponse): void {
  const { expect, request } = fuzzCase;
  const { status, text } = response;
  const fail = (why: string): Error => new Error(`${why}\nstatus ${status}, body ${text.slice(0, 500)}`);
  if (!expect.status.includes(status)) throw fail(`status ${status}, expected one of ${expect.status.join(', ')}`);
  if (status === 401 && !String(response.headers['www-authenticate'] ?? '').startsWith('Bearer ')) {
    throw fail('a 401 without a Bearer challenge');
  }
  if (status === 405 && response.headers.allow !== 'GET, POST, DELETE') throw fail('a 405 without Allow');
  if (request.method === 'HEAD' || status === 202 || (status === 200 && request.method !== 'POST')) {
    if (status === 200 && request.method === 'GET') {
      if (!String(response.headers['content-type']).startsWith('text/event-stream')) throw fail('a GET 200 is not SSE');
    } else if (text !== '') throw fail('expected no body');
    return;
  }
  const type = String(response.headers['content-type'] ?? '');
  let messages: unknown[];
  try {
    messages = type.startsWith('text/event-stream') ? sseMessages(text) : [JSON.parse(text)];
  } catch {
    throw fail(`the body is not JSON (${type})`);
  }
  if (!type.startsWith('application/json') && !type.startsWith('text/event-stream')) throw fail(`content type ${type}`);
  for (const message of messages) if (!isObject(message) || message.jsonrpc !== '2.0') throw fail('not JSON-RPC 2.0');
  const final = messages.at(-1) as Record<string, unknown> | undefined;
  if (final === undefined || 'method' in final) throw fail('no JSON-RPC response');
  if ('result' in final === 'error' in final) throw fail('a response needs exactly one of result and error');
  if ('result' in final) {
    if (status !== 200 || expect.result !== true) throw fail('a result where an error was owed');
  } else {
    const error = final.error;
    if (!isObject(error) || !Number.isInteger(error.code) || typeof error.message !== 'string') throw fail('bad error');
    const code = (error as { code: number }).code;
    const entry = CATALOGUE.get(code);
    if (entry === undefined) throw fail(`error code ${code} is not in the catalogue`);
    if (!entry?.http.includes(status))
      throw fail(`the catalogue gives ${code} only with HTTP ${entry?.http.join(', ')}`);
    if (expect.codes !== undefined && !expect.codes.includes(code)) {
      throw fail(`error code ${code}, expected ${expect.codes.length === 0 ? 'a result' : expect.codes.join(' or ')}`);
    }
  }
  // JSON-RPC 2.0: every response carries `id`; an HTTP-level refusal has the request's when its body was read,
  // null otherwise.
  if (!('id' in final)) throw fail('a response without id');
  const idOk = Object.is(final.id, expect.id) || (status !== 200 && final.id === null);
  if (expect.id !== undefined && !idOk) {
    throw fail(`id ${JSON.stringify(final.id)}, expected ${JSON.stringify(expect.id)}`);
  }
}

const [ownToken, foreignToken] = Object.keys(FUZZ_TOKENS) as [string, string];
const postHeaders = (token: string, session?: string): Record<string, string> => ({
  Authorization: `Bearer ${token}`,
  'Content-Type': 'application/json',
  Accept: 'application/json, text/event-stream',
  'MCP-Protocol-Version': '2025-11-25',
  ...(session !== undefined && { 'Mcp-Session-Id': session }),
});

async function call(url: string, agent: Agent, token: string, session: string, method: string, params: unknown) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });
  const response = await send(url, { method: 'POST', headers: postHeaders(token, session), body }, agent);
  const message = JSON.parse(response.text) as { result?: Record<string, unknown> };
  if (message.result === undefined) throw new Error(`${method} failed: ${response.text}`);
  return message.result;
}

async function initialize(url: string, agent: Agent, token: string): Promise<string> {
  const body = JSON.stringify({
    jsonrpc: '2.0',
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'fuzz', version: '1' } },
  });
  const response = await send(url, { method: 'POST', headers: postHeaders(token), body }, agent);
  const session = response.headers['mcp-session-id'];
  if (response.status !== 200 || typeof session !== 'string') throw new Error(`initialize: ${response.text}`);
  return session;
}

/** Sessions of both principals, a dozen finished tasks of the first and the cursors of their pages. */
export async function buildWorld(url: string, agent: Agent): Promise<World> {
  const own = await initialize(url, agent, ownToken);
  const foreign = await initialize(url, agent, foreignToken);
  const taskIds: string[] = [];
  for (let index = 0; index < 12; index++) {
    const failing = index % 3 === 0;
    const params = { name: failing ? 'fail' : 'sleep', arguments: failing ? { message: 'no' } : { ms: 0 }, task: {} };
    const created = await call(url, agent, ownToken, own, 'tools/call', params);
    taskIds.push((created.task as { taskId: string }).taskId);
  }
  const cursors: string[] = [];
  let cursor: string | undefined;
  do {
    const page = await call(url, agent, ownToken, own, 'tasks/list', cursor === undefined ? {} : { cursor });
    cursor = page.nextCursor as string | undefined;
    if (cursor !== undefined) cursors.push(cursor);
  } while (cursor !== undefined);
  if (cursors.length === 0) throw new Error('tasks/list gave no cursor');
  return {
    tokens: { own: ownToken, foreign: foreignToken },
    sessions: { own, foreign },
    taskIds,
    cursors,
    freshSession: () => initialize(url, agent, ownToken),
  };
}

/** A keep-alive agent for `sockets` requests at a time. */
export const fuzzAgent = (sockets: number): Agent => new Agent({ keepAlive: true, maxSockets: sockets });

/**
 * Runs `numRuns` generated cases, one request at a time, against the gateway at `url` (fast-check prints the
 * seed and the shrunk counterexample on failure).
 */
export async function fuzzRun(options: {
  readonly url: string;
  readonly world: World;
  readonly agent: Agent;
  readonly numRuns: number;
  readonly seed?: number;
  /** Stop generating cases after this long (the run then counts as passed for the cases it ran). */
  readonly timeLimitMs?: number;
  readonly onCase?: () => void;
}): Promise<void> {
  const { url, world, agent, onCase } = options;
  const property = fc.asyncProperty(specArbitrary, async (spec) => {
    const fuzzCase = await materialize(spec, world);
    check(fuzzCase, await send(url, fuzzCase.request, agent));
    onCase?.();
  });
  await fc.assert(property, {
    numRuns: options.numRuns,
    ...(options.seed !== undefined && { seed: options.seed }),
    ...(options.timeLimitMs !== undefined && {
      interruptAfterTimeLimit: options.timeLimitMs,
      markInterruptAsFailure: false,
    }),
  });
}
