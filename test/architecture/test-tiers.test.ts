import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FAST_TESTS, NEEDS_SOMETHING } from '../test-tiers.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** Every test file of the workspace, relative to the root. */
function testFiles(dir = root, found: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (name === 'node_modules' || name === 'dist' || name.startsWith('.')) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) testFiles(path, found);
    else if (name.endsWith('.test.ts')) found.push(relative(root, path));
  }
  return found;
}

/**
 * Whether a test file, or a test-side module it imports (support files and fixtures, never package sources),
 * starts Redis, a process or a browser.
 */
function needsSomething(file: string, seen = new Set<string>()): boolean {
  if (seen.has(file)) return false;
  seen.add(file);
  const text = readFileSync(file, 'utf8');
  if (NEEDS_SOMETHING.some((pattern) => pattern.test(text))) return true;
  for (const match of text.matchAll(/from '(\.{1,2}\/[^']+)'/g)) {
    const target = resolve(dirname(file), (match[1] ?? '').replace(/\.js$/, '.ts'));
    if (target.includes(`${join('/', 'src', '/')}`) || !existsSync(target)) continue;
    if (needsSomething(target, seen)) return true;
  }
  return false;
}

describe('test tiers (npm run test:fast)', () => {
  it('lists exactly the tests that need no Redis, no process and no browser', () => {
    const needNothing = testFiles()
      .filter((file) => !needsSomething(join(root, file)))
      .sort();
    expect([...FAST_TESTS].sort()).toEqual(needNothing);
  });
});
