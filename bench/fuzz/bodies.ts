import fc from 'fast-check';
import type { Body } from './spec.js';

/** Values of every JSON type but string. */
export const notString = fc.oneof(
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
  fc.array(fc.integer(), { maxLength: 2 }),
  fc.dictionary(fc.string({ maxLength: 4 }), fc.integer(), { maxKeys: 2 }),
);
/** Values of every JSON type but object. */
export const notObject = fc.oneof(
  fc.integer(),
  fc.string({ maxLength: 8 }),
  fc.boolean(),
  fc.array(fc.integer(), { maxLength: 2 }),
);

/** Bodies JSON.parse refuses (after the UTF-8 decoding and BOM stripping of the body reader). */
export function unparsable(text: string): boolean {
  const stripped = text.replace(/^\uFEFF/, '');
  if (stripped.trim() === '') return true;
  try {
    JSON.parse(stripped);
    return false;
  } catch {
    return true;
  }
}
const PING = '{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}';
export const unparsableBody: fc.Arbitrary<Body> = fc.oneof(
  fc.nat({ max: PING.length - 1 }).map((cut) => PING.slice(0, cut)),
  fc.string({ unit: 'binary', maxLength: 40 }).filter(unparsable),
  fc.integer({ min: 1, max: 20_000 }).map((depth) => '['.repeat(depth)),
  fc.integer({ min: 1, max: 5_000 }).map((depth) => '{"a":'.repeat(depth)),
  fc.constantFrom(
    'NaN',
    'Infinity',
    'undefined',
    "{'jsonrpc':'2.0'}",
    '{"a":1,}',
    '{"jsonrpc":"2.0","id":1,"method":"ping","params":NaN}',
    '  \t\n',
  ),
  fc.uint8Array({ minLength: 1, maxLength: 40 }).filter((bytes) => unparsable(new TextDecoder().decode(bytes))),
);
const jsonrpc = { jsonrpc: '2.0' } as const;
export const notMessageBody = fc.oneof(
  fc.array(fc.jsonValue({ maxDepth: 2 }), { maxLength: 3 }).map((batch) => JSON.stringify(batch)),
  fc.oneof(fc.integer(), fc.string({ maxLength: 10 }), fc.boolean(), fc.constant(null)).map((v) => JSON.stringify(v)),
  fc
    .record({
      jsonrpc: fc.jsonValue({ maxDepth: 1 }).filter((v) => v !== '2.0'),
      id: fc.constant(1),
      method: fc.constant('ping'),
    })
    .map((v) => JSON.stringify(v)),
  fc
    .dictionary(
      fc.string({ maxLength: 6 }).filter((k) => !['method', 'result', 'error', '__proto__'].includes(k)),
      fc.jsonValue({ maxDepth: 1 }),
      { maxKeys: 3 },
    )
    .map((members) => JSON.stringify({ ...members, ...jsonrpc })),
  notString.map((method) => JSON.stringify({ ...jsonrpc, id: 1, method })),
  fc
    .constantFrom<unknown>(null, {}, [], 1.5, true, 1e300)
    .map((id) => JSON.stringify({ ...jsonrpc, id, method: 'ping' })),
  fc
    .string({ minLength: 1, maxLength: 6 })
    .filter((k) => !['jsonrpc', 'id', 'method', 'params', '__proto__'].includes(k))
    .map((extra) => JSON.stringify({ ...jsonrpc, id: 1, method: 'ping', [extra]: 1 })),
  notObject.map((params) => JSON.stringify({ ...jsonrpc, id: 1, method: 'ping', params })),
  fc.integer({ min: 1, max: 10_000 }).map((depth) => `${'['.repeat(depth)}${']'.repeat(depth)}`),
  // Well-formed messages nesting deeper than the gateway accepts (64 levels), in every member that nests.
  fc
    .tuple(
      fc.integer({ min: 130, max: 6_000 }),
      fc.constantFrom(
        (deep: string) => `{"jsonrpc":"2.0","id":"r-1","result":{"x":${deep}}}`,
        (deep: string) => `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"_meta":{"x":${deep}}}}`,
        (deep: string) =>
          `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"sleep","arguments":{"ms":0,"x":${deep}},"task":{}}}`,
        (deep: string) => `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1,"x":${deep}}}`,
      ),
      fc.boolean(),
    )
    .map(([depth, message, arrays]) =>
      message(arrays ? `${'['.repeat(depth)}${']'.repeat(depth)}` : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`),
    ),
);
