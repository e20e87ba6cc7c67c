import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../..', import.meta.url));
const CATALOGUE = 'packages/protocol/src/error-catalogue.ts';

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist') return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return /\.(ts|lua)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The code of a TypeScript file without its comments and the text of its string literals. */
function codeOnly(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i += 1) {
    const char = text[i];
    const next = text[i + 1];
    if (char === '/' && next === '/') {
      while (i < text.length && text[i] !== '\n') i += 1;
      out += '\n';
    } else if (char === '/' && next === '*') {
      const end = text.indexOf('*/', i + 2);
      i = end < 0 ? text.length : end + 1;
    } else if (char === "'" || char === '"' || char === '`') {
      for (i += 1; i < text.length && text[i] !== char; i += 1) if (text[i] === '\\') i += 1;
      out += `${char}${char}`;
    } else out += char;
  }
  return out;
}

describe('JSON-RPC error codes', () => {
  it('are written as numbers only in the error catalogue; every other source names them through ErrorCode', () => {
    const files = ['packages', 'test/harness'].flatMap((dir) => sourceFiles(join(root, dir)));
    const offenders = files
      .filter((file) => relative(root, file) !== CATALOGUE && /\bsrc\b/.test(relative(root, file)))
      .flatMap((file) =>
        [...codeOnly(readFileSync(file, 'utf8')).matchAll(/-\s*32[0-9]{3}\b/g)].map(
          (match) => `${relative(root, file)}: ${match[0]}`,
        ),
      );
    expect(files.length).toBeGreaterThan(50);
    expect(offenders).toEqual([]);
  });

  it('sees a literal code in code and not in comments or strings', () => {
    expect(codeOnly("// -32001\nconst a = '-32002'; /* -32003 */ const b = -32004;")).toMatch(/-32004/);
    expect(codeOnly("// -32001\nconst a = '-32002'; /* -32003 */ const b = 1;")).not.toMatch(/-32/);
  });
});
