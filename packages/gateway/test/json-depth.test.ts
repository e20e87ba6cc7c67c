import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, requireShallowJson } from '../src/http/guards.js';

/** A message (level 1) whose params are `levels` nested objects (levels 2 to levels + 1). */
const message = (levels: number) => ({
  jsonrpc: '2.0',
  method: 'x',
  params: JSON.parse(`${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`),
});

describe('the nesting limit of request bodies', () => {
  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1} with 400 -32600 naming where`, () => {
    expect(() => requireShallowJson(message(MAX_JSON_DEPTH - 1))).not.toThrow();
    expect(() => requireShallowJson([[[['scalars do not count']]]])).not.toThrow();
    let refused: unknown;
    try {
      requireShallowJson(message(MAX_JSON_DEPTH));
    } catch (error) {
      refused = error;
    }
    expect(refused).toMatchObject({
      status: 400,
      rpcCode: -32600,
      message: `Invalid Request: the body nests deeper than 64 levels (at ${`params${'.a'.repeat(MAX_JSON_DEPTH - 1)}`.slice(0, 80)}…)`,
    });
  });

  it('names array positions and keys on the way', () => {
    const deep = JSON.parse(`${'['.repeat(70)}${']'.repeat(70)}`);
    expect(() => requireShallowJson({ params: { list: [1, { items: deep }] } })).toThrow(
      `(at params.list[1].items${'[0]'.repeat(59)}`.slice(0, 84),
    );
  });
});
