import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * No source file over 400 lines: every file git tracks whose name ends in a code extension (TypeScript,
 * JavaScript, Lua, shell, Python, the chart's templates), tests, fixtures, scripts and benchmarks included.
 * Documentation, lockfiles, JSON and YAML data are not code and are not counted.
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const MAX_LINES = 400;
const CODE = /\.(ts|tsx|mts|cts|js|mjs|cjs|lua|sh|py|tpl)$/;
const SCRIPTS = [
  'scripts/test',
  'scripts/bench',
  'scripts/chaos',
  'scripts/conformance',
  'scripts/dev',
  'scripts/render-manifests',
  'scripts/image',
  '.ci/run',
];

function trackedFiles(): string[] {
  const listed = execFileSync('git', ['ls-files', '-z'], { cwd: root, encoding: 'utf8' });
  return listed.split('\0').filter((path) => path !== '');
}

function lineCount(path: string): number {
  const text = readFileSync(join(root, path), 'utf8');
  return text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

describe('file size', () => {
  it(`keeps every code file at ${MAX_LINES} lines or fewer`, () => {
    const code = trackedFiles().filter((path) => CODE.test(path) || SCRIPTS.includes(path));
    expect(code.length).toBeGreaterThan(100);
    const over = code
      .map((path) => ({ path, lines: lineCount(path) }))
      .filter(({ lines }) => lines > MAX_LINES)
      .map(({ path, lines }) => `${path}: ${lines} lines`);
    expect(over).toEqual([]);
  });
});
