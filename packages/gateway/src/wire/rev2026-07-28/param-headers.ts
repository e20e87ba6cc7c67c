import { ErrorCode } from '@taskgate/protocol';
import { WireRefusal } from '../codec.js';

const BASE64_WRAPPED = /^=\?base64\?(.*)\?=$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/** The `Mcp-Param-*` headers of a request, by lower-case name. */
export function paramHeaders(headers: Readonly<Record<string, string | string[] | undefined>>): Map<string, string> {
  const found = new Map<string, string>();
  for (const [name, value] of Object.entries(headers)) {
    if (!name.startsWith('mcp-param-') || value === undefined) continue;
    found.set(name.slice('mcp-param-'.length), Array.isArray(value) ? (value[0] ?? '') : value);
  }
  return found;
}

/** A header value as the argument it mirrors: `=?base64?…?=` decoded (strictly), anything else literally. */
function decoded(value: string, header: string): string {
  const wrapped = BASE64_WRAPPED.exec(value);
  if (wrapped === null) return value;
  const body = wrapped[1] ?? '';
  if (!BASE64.test(body)) {
    throw new WireRefusal(400, ErrorCode.HeaderMismatch, `Header mismatch: Mcp-Param-${header} is not valid Base64`);
  }
  return Buffer.from(body, 'base64').toString('utf8');
}

/**
 * Checks the `Mcp-Param-<Name>` headers of a `tools/call` against the arguments whose input-schema property
 * carries `x-mcp-header: <Name>` (SEP-2243): an argument given in the body needs its header, with the same
 * value (-32020, HTTP 400 otherwise).
 */
export function checkParamHeaders(
  inputSchema: Record<string, unknown>,
  args: Record<string, unknown>,
  headers: ReadonlyMap<string, string>,
): void {
  const properties = (inputSchema.properties ?? {}) as Record<string, Record<string, unknown> | undefined>;
  for (const [property, schema] of Object.entries(properties)) {
    const header = schema?.['x-mcp-header'];
    const value = args[property];
    if (typeof header !== 'string' || value === undefined || value === null || typeof value === 'object') continue;
    const sent = headers.get(header.toLowerCase());
    if (sent === undefined) {
      throw new WireRefusal(
        400,
        ErrorCode.HeaderMismatch,
        `Header mismatch: the Mcp-Param-${header} header is required (params.arguments.${property})`,
      );
    }
    if (decoded(sent.trim(), header) !== String(value)) {
      throw new WireRefusal(
        400,
        ErrorCode.HeaderMismatch,
        `Header mismatch: Mcp-Param-${header} does not match params.arguments.${property}`,
      );
    }
  }
}
