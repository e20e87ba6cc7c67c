import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CATALOGUE, ErrorCode } from '../src/index.js';

const readme = readFileSync(new URL('../../../README.md', import.meta.url), 'utf8');

/** The rows of the table under `### Error codes`, as cells. */
function errorTable(): string[][] {
  const section = readme.split(/^#{2,3} /m).find((part) => part.startsWith('Error codes\n'));
  if (section === undefined) throw new Error('README.md has no "### Error codes" section');
  return section
    .split('\n')
    .filter((line) => /^\| -\d/.test(line))
    .map((line) =>
      line
        .slice(1, -1)
        .split(' | ')
        .map((cell) => cell.trim()),
    );
}

// To regenerate the table: node --conditions=taskgate-source --import tsx scripts/error-table.ts
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

  it("is exactly the README's table of error codes", () => {
    expect(errorTable()).toEqual(
      ERROR_CATALOGUE.map((entry) => [
        String(entry.code),
        `\`${entry.name}\``,
        entry.origin,
        entry.http.join(', '),
        entry.meaning,
      ]),
    );
  });
});
