import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { REQUIREMENTS } from './manifest.js';
import { REQUIREMENTS_DOC } from './requirements-doc.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function testFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name.startsWith('.')) return [];
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return testFiles(path);
    return entry.name.endsWith('.test.ts') && !path.endsWith('coverage.test.ts') ? [path] : [];
  });
}

/** Ids written in brackets inside test titles: `it('[LIF-1][CNL-3] ...')`. */
function citations(): Map<string, string[]> {
  const cited = new Map<string, string[]>();
  const title = /\b(?:it|test|describe)(?:\.\w+)?\(\s*(['"`])((?:\\.|(?!\1).)*)\1/g;
  for (const file of [...testFiles(join(root, 'packages')), ...testFiles(join(root, 'test'))]) {
    const text = readFileSync(file, 'utf8');
    for (const match of text.matchAll(title)) {
      for (const id of (match[2] ?? '').matchAll(/\[([A-Z]+-\d+)\]/g)) {
        const key = id[1] ?? '';
        cited.set(key, [...(cited.get(key) ?? []), relative(root, file)]);
      }
    }
  }
  return cited;
}

describe('requirements manifest', () => {
  it('has unique ids', () => {
    const ids = REQUIREMENTS.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('lists exactly the ids of the requirements document, in its order', () => {
    const text = readFileSync(join(root, REQUIREMENTS_DOC), 'utf8');
    const documented = [...text.matchAll(/^- ([A-Z]+-\d+)\b/gm)].map((m) => m[1]);
    expect(documented.length).toBeGreaterThan(0);
    expect(REQUIREMENTS.map((r) => r.id)).toEqual(documented);
  });

  it('is cited by a test for every id', () => {
    const cited = citations();
    const known = new Set(REQUIREMENTS.map((r) => r.id));
    const unknown = [...cited.keys()].filter((id) => !known.has(id));
    expect(unknown, 'tests cite ids that are not in the manifest').toEqual([]);

    const uncited = REQUIREMENTS.map((r) => r.id).filter((id) => !cited.has(id));
    expect(uncited, 'every id must be cited by a test title').toEqual([]);
  });
});
