import { ErrorCode } from '@taskgate/protocol';
import type { NextFunction, Request, Response } from 'express';
import { LOOPBACK_HOSTS } from '../defaults.js';
import { HttpError, sendHttpError } from '../messages/http-error.js';
import type { ResolvedGatewayOptions } from '../options.js';

/** The host name of a Host header: `[::1]:3000` → `[::1]`, `Example.com:80` → `example.com`. */
export function hostName(host: string): string {
  const lower = host.trim().toLowerCase();
  if (lower.startsWith('[')) {
    const end = lower.indexOf(']');
    return end < 0 ? lower : lower.slice(0, end + 1);
  }
  const colon = lower.indexOf(':');
  return colon < 0 ? lower : lower.slice(0, colon);
}

function originAllowed(origin: string, allowed: ResolvedGatewayOptions['allowedOrigins']): boolean {
  if (allowed === 'any') return true;
  let url: URL;
  try {
    url = new URL(origin);
  } catch {
    return false;
  }
  if (allowed === 'loopback') {
    return (url.protocol === 'http:' || url.protocol === 'https:') && LOOPBACK_HOSTS.includes(url.hostname);
  }
  return allowed.includes(url.origin) || allowed.includes(origin);
}

/**
 * DNS-rebinding protection (transport spec, security warning): a Host outside the allowed names or a foreign
 * Origin gets 403 before anything else happens.
 */
export function hostOriginGuard(options: ResolvedGatewayOptions) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const host = req.headers.host;
    if (options.allowedHosts !== 'any') {
      const allowed =
        host !== undefined && (options.allowedHosts.includes(hostName(host)) || options.allowedHosts.includes(host));
      if (!allowed) {
        sendHttpError(
          res,
          new HttpError(403, ErrorCode.InvalidRequest, `Forbidden: Host '${host ?? ''}' is not allowed`),
        );
        return;
      }
    }
    const origin = req.headers.origin;
    if (origin !== undefined && !originAllowed(origin, options.allowedOrigins)) {
      sendHttpError(res, new HttpError(403, ErrorCode.InvalidRequest, `Forbidden: Origin '${origin}' is not allowed`));
      return;
    }
    next();
  };
}

/** Accept headers seen lately and their media types: a client sends the same one with every request. */
const acceptSeen = new Map<string, ReadonlySet<string>>();
/** Distinct Accept headers kept; past this the cache starts again (a client inventing new ones gains nothing). */
const ACCEPT_SEEN_MAX = 64;

/** The media types an Accept header lists (parameters and q-values dropped). */
function acceptedTypes(req: Request): ReadonlySet<string> {
  const header = req.headers.accept ?? '';
  let types = acceptSeen.get(header);
  if (types === undefined) {
    types = new Set(header.split(',').map((part) => (part.split(';')[0] ?? '').trim().toLowerCase()));
    if (acceptSeen.size >= ACCEPT_SEEN_MAX) acceptSeen.clear();
    acceptSeen.set(header, types);
  }
  return types;
}

/** 406 unless Accept lists every one of `types`. */
export function requireAccept(req: Request, types: readonly string[]): void {
  const accepted = acceptedTypes(req);
  if (!types.every((type) => accepted.has(type))) {
    throw new HttpError(
      406,
      ErrorCode.InvalidRequest,
      `Not Acceptable: the Accept header must list ${types.join(' and ')}`,
    );
  }
}

/** 415 unless the body is declared as JSON (`application/json`, parameters such as charset allowed). */
export function requireJsonContentType(req: Request): void {
  const type = (req.headers['content-type'] ?? '').split(';')[0]?.trim().toLowerCase();
  if (type !== 'application/json') {
    throw new HttpError(415, ErrorCode.InvalidRequest, 'Unsupported Media Type: Content-Type must be application/json');
  }
}

/**
 * How deep a request body may nest (objects and arrays, the message itself being level 1). Deeper values
 * would pass JSON.parse and schema validation and then break recursive code further on (a job's data could
 * not be serialised); tool arguments of real tools stay far below this.
 */
export const MAX_JSON_DEPTH = 64;

interface Frame {
  readonly value: unknown;
  readonly depth: number;
  readonly key: string;
  readonly parent: Frame | undefined;
}

/**
 * 400 (-32600) naming where a parsed body nests deeper than MAX_JSON_DEPTH levels (the first few members of
 * the path). Iterative: a hostile depth cannot exhaust the stack here.
 */
export function requireShallowJson(value: unknown): void {
  if (value === null || typeof value !== 'object') return;
  const stack: Frame[] = [{ value, depth: 1, key: '', parent: undefined }];
  for (let frame = stack.pop(); frame !== undefined; frame = stack.pop()) {
    if (frame.depth > MAX_JSON_DEPTH) throw tooDeep(frame);
    const depth = frame.depth + 1;
    const current = frame.value;
    if (Array.isArray(current)) {
      for (let i = 0; i < current.length; i++) {
        const item: unknown = current[i];
        if (item !== null && typeof item === 'object') stack.push({ value: item, depth, key: `[${i}]`, parent: frame });
      }
    } else {
      for (const key in current as Record<string, unknown>) {
        const item = (current as Record<string, unknown>)[key];
        if (item !== null && typeof item === 'object')
          stack.push({ value: item, depth, key: `.${key}`, parent: frame });
      }
    }
  }
}

function tooDeep(frame: Frame): HttpError {
  const keys: string[] = [];
  for (let at: Frame | undefined = frame; at !== undefined; at = at.parent) keys.push(at.key);
  const path = keys.reverse().join('').replace(/^\./, '');
  const shown = path.length > 80 ? `${path.slice(0, 80)}…` : path;
  return new HttpError(
    400,
    ErrorCode.InvalidRequest,
    `Invalid Request: the body nests deeper than ${MAX_JSON_DEPTH} levels (at ${shown})`,
  );
}
