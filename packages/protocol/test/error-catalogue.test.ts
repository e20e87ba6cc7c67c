import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ErrorCode } from '../src/index.js';

// docs/reference/errors.md is printed from the catalogue (scripts/doc-tables.ts; test/docs/reference-tables.test.ts).
describe('the error catalogue', () => {
  it('has one entry per code, each code used once, with a meaning and HTTP statuses', () => {
    expect(ERROR_CATALOGUE.map((entry) => entry.name)).toEqual(Object.keys(ErrorCode));
    expect(new Set(ERROR_CATALOGUE.map((entry) => entry.code)).size).toBe(ERROR_CATALOGUE.length);
    for (const entry of ERROR_CATALOGUE) {
      expect(entry.meaning.length, entry.name).toBeGreaterThan(20);
      expect(entry.http.length, entry.name).toBeGreaterThan(0);
      // taskgate's own codes sit in the server-defined range of JSON-RPC.
      if (entry.origin === 'taskgate') expect(entry.code >= -32099 && entry.code <= -32000, entry.name).toBe(true);
    }
  });
});
