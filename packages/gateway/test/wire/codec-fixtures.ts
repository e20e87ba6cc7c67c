import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { type JsonRpcErrorObject, type JsonRpcRequest, parseJsonRpcMessage, toJsonRpcError } from '@taskgate/protocol';
import { HttpError } from '../../src/messages/http-error.js';
import { WireRefusal } from '../../src/wire/codec.js';

/** One golden case of a codec: headers and body with what they decode to (or the refusal), or an answer encoded. */
export interface CodecFixture {
  readonly file: string;
  readonly about: string;
  readonly headers?: Record<string, string>;
  readonly body?: unknown;
  readonly decoded?: { readonly request: Record<string, unknown>; readonly params?: unknown };
  readonly refused?: { readonly status: number; readonly error: JsonRpcErrorObject };
  readonly method?: string;
  readonly answer?: unknown;
  readonly wire?: unknown;
}

/** The fixtures of one revision, `test/wire/fixtures/<revision>/*.json`. */
export function codecFixtures(revision: string): CodecFixture[] {
  const dir = fileURLToPath(new URL(`./fixtures/${revision}/`, import.meta.url));
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .sort()
    .map((file) => ({ file, ...(JSON.parse(readFileSync(join(dir, file), 'utf8')) as Omit<CodecFixture, 'file'>) }));
}

/** A fixture's body as the HTTP layer hands it on: a parsed JSON-RPC request. */
export function requestOf(fixture: CodecFixture): JsonRpcRequest {
  return parseJsonRpcMessage(fixture.body) as JsonRpcRequest;
}

/**
 * What the client gets for an error a codec throws: the HTTP status (an `HttpError`'s or a `WireRefusal`'s own,
 * else the revision's for the code) and the JSON-RPC error, as the runner and the HTTP layer write them.
 */
export function refusalOf(
  error: unknown,
  errorStatus: (code: number) => number,
): { status: number; error: JsonRpcErrorObject } {
  if (error instanceof HttpError)
    return { status: error.status, error: { code: error.rpcCode, message: error.message } };
  const rpcError = toJsonRpcError(error);
  return { status: error instanceof WireRefusal ? error.status : errorStatus(rpcError.code), error: rpcError };
}

/** A message as it goes on the wire: through JSON, where a member set to `undefined` is left out. */
export function asSent(message: unknown): unknown {
  return JSON.parse(JSON.stringify(message));
}
