import { ErrorCode } from '@taskgate/protocol';
import type { Body, Expectation, RealRef, Spec } from './spec.js';
import { FUZZ_BODY_LIMIT } from './target.js';

/** The live values a case may name: the two principals' tokens and sessions, real task ids and cursors. */
export interface World {
  readonly tokens: { readonly own: string; readonly foreign: string };
  readonly sessions: { readonly own: string; readonly foreign: string };
  /** Tasks of the `own` principal. */
  readonly taskIds: readonly string[];
  /** `tasks/list` cursors of the `own` principal. */
  readonly cursors: readonly string[];
  /** A new session of the `own` principal (for a DELETE). */
  freshSession(): Promise<string>;
}

/** One HTTP request of the fuzz. */
export interface FuzzRequest {
  readonly method: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: Body;
}

/** A request and the answer the gateway owes it. */
export interface FuzzCase {
  readonly request: FuzzRequest;
  readonly expect: Expectation;
}

const { ParseError, InvalidRequest, MethodNotFound, InvalidParams, SessionNotFound } = ErrorCode;
/** Every status the gateway may answer with outside draining (never a 5xx). */
export const STATUSES = [200, 202, 400, 401, 403, 404, 405, 406, 408, 409, 410, 413, 415, 431] as const;
const PING = JSON.stringify({ jsonrpc: '2.0', id: 'fuzz', method: 'ping' });
/** What Node does to a header value on the wire: leading and trailing blanks go. */
const onWire = (value: string): string => value.replace(/^[ \t]+|[ \t]+$/g, '');
const refusal = (status: number, code: number): Expectation => ({ status: [status], codes: [code] });

function headersFor(world: World, method: string, session: string | undefined): Record<string, string> {
  return {
    Authorization: `Bearer ${world.tokens.own}`,
    'MCP-Protocol-Version': '2025-11-25',
    ...(method === 'POST' && { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream' }),
    ...(method === 'GET' && { Accept: 'text/event-stream' }),
    ...(session !== undefined && { 'Mcp-Session-Id': session }),
  };
}

function without(headers: Record<string, string>, name: string, value?: string): Record<string, string> {
  const { [name]: _dropped, ...rest } = headers;
  return value === undefined ? rest : { ...rest, [name]: value };
}

function real(world: World, kind: string, ref: RealRef): string {
  const values = kind === 'taskId' ? world.taskIds : world.cursors;
  const value = values[ref.real % Math.max(1, values.length)] ?? 'none';
  if (ref.tamper === undefined || value.length === 0) return value;
  const at = ref.tamper % value.length;
  return `${value.slice(0, at)}${value[at] === 'A' ? 'B' : 'A'}${value.slice(at + 1)}`;
}

/** Replaces `{ $real, ref }` members with live values. */
function resolve(world: World, value: unknown): unknown {
  if (Array.isArray(value)) return value.map((item) => resolve(world, item));
  if (typeof value !== 'object' || value === null) return value;
  const members = value as Record<string, unknown>;
  if (typeof members.$real === 'string') return real(world, members.$real, members.ref as RealRef);
  return Object.fromEntries(Object.entries(members).map(([key, item]) => [key, resolve(world, item)]));
}

const rpc = (id: unknown, method: string, params?: unknown): string =>
  JSON.stringify({ jsonrpc: '2.0', id, method, ...(params !== undefined && { params }) });

function hugeNumberBody(where: 'id' | 'argument' | 'ttl' | 'progressToken', raw: string): string {
  const marker = '"__raw_number__"';
  const body =
    where === 'id'
      ? rpc('__raw_number__', 'ping')
      : where === 'progressToken'
        ? rpc(1, 'ping', { _meta: { progressToken: '__raw_number__' } })
        : rpc(1, 'tools/call', {
            name: 'sleep',
            arguments: { ms: where === 'argument' ? '__raw_number__' : 0 },
            ...(where === 'ttl' && { task: { ttl: '__raw_number__' } }),
          });
  return body.replace(marker, raw);
}

/** The request of a spec in the live world, and the one answer (or the answers) the gateway owes it. */
export async function materialize(spec: Spec, world: World): Promise<FuzzCase> {
  const own = world.sessions.own;
  const post = headersFor(world, 'POST', own);
  switch (spec.kind) {
    case 'method':
      return { request: { method: spec.method, headers: post }, expect: refusal(405, InvalidRequest) };
    case 'host':
      return {
        request: {
          method: spec.method,
          headers: { ...headersFor(world, spec.method, own), Host: spec.host },
          body: PING,
        },
        expect: refusal(403, InvalidRequest),
      };
    case 'origin':
      return {
        request: {
          method: spec.method,
          headers: { ...headersFor(world, spec.method, own), Origin: spec.origin },
          body: PING,
        },
        expect: refusal(403, InvalidRequest),
      };
    case 'auth':
      return {
        request: {
          method: spec.method,
          headers: without(headersFor(world, spec.method, own), 'Authorization', spec.authorization),
          ...(spec.method === 'POST' && { body: PING }),
        },
        expect: refusal(401, InvalidRequest),
      };
    case 'accept':
      return {
        request: {
          method: spec.method,
          headers: without(headersFor(world, spec.method, own), 'Accept', spec.accept),
          ...(spec.method === 'POST' && { body: PING }),
        },
        expect: refusal(406, InvalidRequest),
      };
    case 'contentType':
      return {
        request: { method: 'POST', headers: without(post, 'Content-Type', spec.contentType), body: PING },
        expect: refusal(415, InvalidRequest),
      };
    case 'unparsable':
      return { request: { method: 'POST', headers: post, body: spec.body }, expect: refusal(400, ParseError) };
    case 'notMessage':
      return { request: { method: 'POST', headers: post, body: spec.body }, expect: refusal(400, InvalidRequest) };
    case 'tooLarge':
      return {
        request: { method: 'POST', headers: post, body: PING + ' '.repeat(FUZZ_BODY_LIMIT + spec.extra) },
        expect: refusal(413, InvalidRequest),
      };
    case 'hugeHeader':
      // Refused by Node's HTTP parser (16 KiB of headers at most), answered by the gateway's clientError handler.
      return {
        request: {
          method: spec.method,
          headers: { ...headersFor(world, spec.method, own), 'X-Padding': 'p'.repeat(spec.size) },
        },
        expect: refusal(431, InvalidRequest),
      };
    case 'session': {
      const session = spec.session;
      const headers = headersFor(world, spec.method, session === 'foreign' ? world.sessions.foreign : undefined);
      const given = typeof session === 'object' ? session.header : undefined;
      const header = given === undefined ? undefined : onWire(given);
      const request = {
        method: spec.method,
        headers: given === undefined ? headers : { ...headers, 'Mcp-Session-Id': given },
        ...(spec.method === 'POST' && { body: PING }),
      };
      if (session === 'none' || (header !== undefined && !/^[\x21-\x7e]{1,256}$/.test(header))) {
        return { request, expect: refusal(400, InvalidRequest) };
      }
      return { request, expect: refusal(404, SessionNotFound) };
    }
    case 'version':
      return {
        request: {
          method: spec.method,
          headers: { ...headersFor(world, spec.method, own), 'MCP-Protocol-Version': spec.version },
          ...(spec.method === 'POST' && { body: PING }),
        },
        expect: refusal(400, InvalidRequest),
      };
    case 'unknownMethod':
      return {
        request: { method: 'POST', headers: post, body: rpc(spec.id, spec.method) },
        expect: { status: [200], codes: [MethodNotFound], id: spec.id },
      };
    case 'badParams':
      return {
        request: { method: 'POST', headers: post, body: rpc(spec.id, spec.method, spec.params) },
        expect: { status: [200], codes: [InvalidParams], id: spec.id },
      };
    case 'call': {
      const { method, params, allow } = spec.call;
      return {
        request: { method: 'POST', headers: post, body: rpc(spec.id, method, resolve(world, params)) },
        expect: { status: [200], codes: allow.codes, result: allow.result, id: spec.id },
      };
    }
    case 'hugeNumber': {
      const request = { method: 'POST', headers: post, body: hugeNumberBody(spec.where, spec.raw) };
      if (spec.where === 'id' || spec.where === 'progressToken') {
        return { request, expect: { status: [200, 400], codes: [InvalidRequest], result: true } };
      }
      return { request, expect: { status: [200], codes: [InvalidParams], result: true, id: 1 } };
    }
    case 'notification': {
      const body = JSON.stringify({ jsonrpc: '2.0', method: spec.method, ...(spec.params && { params: spec.params }) });
      const refused = spec.method === 'notifications/cancelled' && spec.params === undefined;
      return {
        request: { method: 'POST', headers: post, body },
        expect: refused ? refusal(400, InvalidParams) : { status: [202] },
      };
    }
    case 'response': {
      const outcome = spec.error ? { error: { code: -1, message: 'no' } } : { result: {} };
      return {
        request: { method: 'POST', headers: post, body: JSON.stringify({ jsonrpc: '2.0', id: spec.id, ...outcome }) },
        expect: refusal(400, InvalidParams),
      };
    }
    case 'get': {
      const headers = headersFor(world, 'GET', own);
      const id = spec.lastEventId === undefined ? '' : onWire(spec.lastEventId);
      return {
        request: {
          method: 'GET',
          headers: spec.lastEventId === undefined ? headers : { ...headers, 'Last-Event-ID': spec.lastEventId },
        },
        expect: { status: id === '' ? [200, 409] : [200, 400, 409], codes: [InvalidRequest] },
      };
    }
    case 'delete':
      return {
        request: { method: 'DELETE', headers: headersFor(world, 'DELETE', await world.freshSession()) },
        expect: { status: [200] },
      };
    case 'initialize': {
      const headers = headersFor(world, 'POST', spec.withSession ? own : undefined);
      const request = { method: 'POST', headers, body: rpc(0, 'initialize', spec.params) };
      const envelope =
        spec.params === undefined ||
        (typeof spec.params === 'object' && spec.params !== null && !Array.isArray(spec.params));
      if (!envelope) return { request, expect: refusal(400, InvalidRequest) };
      if (spec.withSession) return { request, expect: refusal(400, InvalidRequest) };
      return { request, expect: { status: [200], codes: [InvalidParams], result: true, id: 0 } };
    }
    case 'chaos': {
      // A DELETE ends its session: never the one the other cases use.
      const mine = spec.method === 'DELETE' ? await world.freshSession() : own;
      const session = spec.session === 'own' ? mine : spec.session === 'foreign' ? world.sessions.foreign : undefined;
      const headers = { ...headersFor(world, spec.method, session), ...spec.headers };
      return {
        request: { method: spec.method, headers, ...(spec.body !== undefined && { body: spec.body }) },
        expect: { status: [...STATUSES] },
      };
    }
  }
}
