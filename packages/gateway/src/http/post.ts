import type { IncomingMessage } from 'node:http';
import type { Logger } from '@taskgate/core';
import { ErrorCode, type JsonRpcMessage, ProtocolError, parseJsonRpcMessage, type RequestId } from '@taskgate/protocol';
import express, { type Request, type RequestHandler, type Response } from 'express';
import type { Caller } from '../auth/caller.js';
import { HttpError, rememberRequestId } from '../messages/http-error.js';
import { describeMessage } from '../ops/trace-request.js';
import type { RunnerServices } from '../run/run-request.js';
import { runMessage } from '../run/run-request.js';
import { type RevisionServices, revisionOf } from '../wire/revisions.js';
import { requireAccept, requireJsonContentType, requireShallowJson } from './guards.js';

/** Runs an express middleware as a promise (the body reader), rejecting with what it passes to `next`. */
function run(middleware: RequestHandler, req: Request, res: Response): Promise<void> {
  return new Promise((resolve, reject) => {
    void middleware(req, res, (error?: unknown) => (error === undefined ? resolve() : reject(error)));
  });
}

/** Maps a body-reader failure to the status Streamable HTTP clients expect. */
function bodyError(error: unknown, limit: number): HttpError {
  const type = (error as { type?: unknown } | null)?.type;
  if (type === 'entity.too.large') {
    return new HttpError(413, ErrorCode.InvalidRequest, `Payload Too Large: the body exceeds ${limit} bytes`);
  }
  if (type === 'charset.unsupported' || type === 'encoding.unsupported') {
    return new HttpError(
      415,
      ErrorCode.InvalidRequest,
      'Unsupported Media Type: send UTF-8 JSON without content encoding',
    );
  }
  return new HttpError(400, ErrorCode.ParseError, 'Parse error: the body could not be read');
}

/**
 * True for a body the plain reader takes: its length declared, within the limit, neither chunked nor
 * content-encoded, UTF-8 (no charset, or utf-8). Anything else (undefined) goes through express's reader, which
 * inflates, decodes other charsets and answers what is too large or unsupported.
 */
function isPlainBody(req: Request, limit: number): boolean {
  const { headers } = req;
  if (headers['content-encoding'] !== undefined || headers['transfer-encoding'] !== undefined) return false;
  const declared = headers['content-length'];
  if (declared === undefined || !/^\d{1,15}$/.test(declared) || Number(declared) > limit) return false;
  const type = headers['content-type'] ?? '';
  const semicolon = type.indexOf(';');
  return semicolon < 0 || /^\s*charset\s*=\s*"?utf-8"?\s*$/i.test(type.slice(semicolon + 1));
}

/**
 * A body whose length Node's HTTP parser holds to its Content-Length, read whole and decoded as UTF-8 (a
 * byte-order mark dropped, as express's reader does); rejects when the client goes away first. Its listeners
 * leave with the body: the 'close' that follows every request then finds none (an Error made there, for a
 * promise settled already, cost 3.7 % of the gateway's CPU: its stack trace).
 */
export function readPlain(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
    };
    const onEnd = (): void => {
      req.off('data', onData);
      req.off('error', reject);
      req.off('close', onClose);
      const text = (chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks)).toString('utf8');
      resolve(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);
    };
    // 'close' before 'end': the client went away.
    const onClose = (): void => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', reject);
      reject(new Error('the request closed before its body was read'));
    };
    req.on('data', onData);
    req.once('end', onEnd);
    req.once('error', reject);
    req.once('close', onClose);
  });
}

/** One JSON-RPC message from a body: -32700 for anything but JSON, -32600 for JSON that is not a message. */
function parseBody(raw: unknown, res: Response): JsonRpcMessage {
  if (typeof raw !== 'string' || raw.trim() === '') {
    throw new HttpError(400, ErrorCode.ParseError, 'Parse error: the body is empty; send one JSON-RPC message');
  }
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch {
    throw new HttpError(400, ErrorCode.ParseError, 'Parse error: the body is not valid JSON');
  }
  const id = requestIdOf(value);
  if (id !== undefined) rememberRequestId(res, id, (value as { method: unknown }).method);
  requireShallowJson(value);
  try {
    return parseJsonRpcMessage(value);
  } catch (error) {
    if (error instanceof ProtocolError) throw new HttpError(400, error.code, error.message);
    throw error;
  }
}

/** The id of a request as far as it can be read: a string or a number, on an object with a method. */
function requestIdOf(value: unknown): RequestId | undefined {
  if (typeof value !== 'object' || value === null || !('method' in value) || !('id' in value)) return undefined;
  const { id } = value;
  return typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id)) ? id : undefined;
}

/**
 * `POST /mcp`: one JSON-RPC message per request, read and parsed here, then run on its revision
 * (`run/run-request.ts`, `wire/revisions.ts`).
 */
export function postHandler(services: RunnerServices & RevisionServices) {
  const readBody = express.text({
    type: () => true,
    limit: services.options.bodyLimitBytes,
    defaultCharset: 'utf-8',
  });
  return async (req: Request, res: Response, caller: Caller, logger: Logger): Promise<void> => {
    requireAccept(req, ['application/json', 'text/event-stream']);
    requireJsonContentType(req);
    const limit = services.options.bodyLimitBytes;
    const body = isPlainBody(req, limit)
      ? await readPlain(req).catch((error: unknown) => {
          throw bodyError(error, limit);
        })
      : await run(readBody, req, res).then(
          () => req.body as unknown,
          (error: unknown) => {
            throw bodyError(error, limit);
          },
        );
    const message = parseBody(body, res);
    describeMessage(message);
    // Revision 2026-07-28: no session, what initialize negotiated travels in each request's _meta.
    return runMessage(services, revisionOf(req.headers, message), req.headers, res, caller, message, logger);
  };
}
