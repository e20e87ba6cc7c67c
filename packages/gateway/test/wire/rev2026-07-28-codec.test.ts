import { ErrorCode, ProtocolError } from '@taskgate/protocol';
import { describe, expect, it } from 'vitest';
import {
  decode,
  decodeParams,
  encode,
  encodeError,
  errorStatus,
  type Rev2026Params,
} from '../../src/wire/rev2026-07-28/codec.js';
import { asSent, type CodecFixture, codecFixtures, refusalOf, requestOf } from './codec-fixtures.js';

const fixtures = codecFixtures('rev2026-07-28');
const decoding = fixtures.filter((fixture) => fixture.body !== undefined);
const encoding = fixtures.filter((fixture) => fixture.answer !== undefined);

/** Decodes a fixture's request as the runner does: the envelope, then the method's params. */
function decoded(fixture: CodecFixture) {
  const { paramHeaders, ...request } = decode(fixture.headers ?? {}, requestOf(fixture));
  const method = request.method as keyof Rev2026Params;
  return {
    request: { ...request, paramHeaders: Object.fromEntries(paramHeaders) },
    params: decodeParams(method, request.params, request.meta),
  };
}

describe('the codec of revision 2026-07-28, from golden fixtures', () => {
  it('has fixtures of both directions', () => {
    expect(decoding.length).toBeGreaterThanOrEqual(10);
    expect(encoding.length).toBeGreaterThanOrEqual(6);
  });

  it.each(decoding.map((fixture) => [fixture.file, fixture] as const))('decodes %s', (_file, fixture) => {
    if (fixture.decoded !== undefined) {
      expect(decoded(fixture)).toStrictEqual(fixture.decoded);
      return;
    }
    let thrown: unknown;
    try {
      decoded(fixture);
    } catch (error) {
      thrown = error;
    }
    expect(thrown, fixture.about).toBeDefined();
    expect(refusalOf(thrown, errorStatus)).toStrictEqual(fixture.refused);
  });

  it.each(encoding.map((fixture) => [fixture.file, fixture] as const))('encodes %s', (_file, fixture) => {
    expect(asSent(encode(fixture.method ?? '', fixture.answer as Parameters<typeof encode>[1]))).toStrictEqual(
      fixture.wire,
    );
  });

  it('reports an unknown resource as -32602 (SEP-2164) and leaves other errors as they are', () => {
    const unknown = new ProtocolError(ErrorCode.ResourceNotFound, 'Resource not found: file:///x', {
      uri: 'file:///x',
    });
    expect(refusalOf(encodeError(unknown), errorStatus)).toStrictEqual({
      status: 200,
      error: { code: ErrorCode.InvalidParams, message: 'Resource not found: file:///x', data: { uri: 'file:///x' } },
    });
    const other = ProtocolError.invalidParams('Invalid params: x');
    expect(encodeError(other)).toBe(other);
  });
});
