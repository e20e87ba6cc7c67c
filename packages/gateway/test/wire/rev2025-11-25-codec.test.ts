import { describe, expect, it } from 'vitest';
import { decode, decodeParams, encode, errorStatus, type SessionMethod } from '../../src/wire/rev2025-11-25/codec.js';
import { asSent, codecFixtures, refusalOf, requestOf } from './codec-fixtures.js';

const fixtures = codecFixtures('rev2025-11-25');
const decoding = fixtures.filter((fixture) => fixture.body !== undefined);
const encoding = fixtures.filter((fixture) => fixture.answer !== undefined);

/** Decodes a fixture's request as the runner does: the headers, then (for a session's method) the params. */
function decoded(fixture: (typeof fixtures)[number]) {
  const message = requestOf(fixture);
  const request = decode(fixture.headers ?? {}, message);
  if (request.method === 'initialize') return { request };
  return { request, params: decodeParams(request.method as SessionMethod, message.params) };
}

describe('the codec of revision 2025-11-25, from golden fixtures', () => {
  it('has fixtures of both directions', () => {
    expect(decoding.length).toBeGreaterThanOrEqual(8);
    expect(encoding.length).toBeGreaterThanOrEqual(5);
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
    expect(asSent(encode(fixture.answer as Parameters<typeof encode>[0]))).toStrictEqual(fixture.wire);
  });
});
