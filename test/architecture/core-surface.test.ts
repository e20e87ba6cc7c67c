import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const coreIndex = 'packages/core/src/index.ts';
const SKIPPED = new Set(['node_modules', 'dist', '.git', '.tools', '.data', 'results']);

/** Source files under `dir` (relative to the root), skipping dependencies and build output. */
function sourcesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) => {
    if (SKIPPED.has(entry.name)) return [];
    const path = relative(root, join(root, dir, entry.name));
    if (entry.isDirectory()) return sourcesUnder(path);
    return /\.(ts|tsx|mts|mjs|js)$/.test(entry.name) && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every place that may use core: the other packages (sources, tests, benchmarks), test/, bench/, scripts/. */
function filesOutsideCore(): string[] {
  const packages = readdirSync(join(root, 'packages')).filter((name) => name !== 'core');
  return [...packages.map((name) => `packages/${name}`), 'test', 'bench', 'scripts'].flatMap(sourcesUnder);
}

const parse = (file: string, text: string): ts.SourceFile =>
  ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
const read = (file: string): string => readFileSync(join(root, file), 'utf8');

/** The names an index exports, and its `export *` lines (which hide what it exports). */
function exportsOf(file: string, text: string): { names: string[]; stars: string[] } {
  const names: string[] = [];
  const stars: string[] = [];
  const source = parse(file, text);
  for (const statement of source.statements) {
    if (!ts.isExportDeclaration(statement)) continue;
    const clause = statement.exportClause;
    if (clause === undefined || ts.isNamespaceExport(clause)) stars.push(statement.getText(source));
    else for (const element of clause.elements) names.push(element.name.text);
  }
  return { names, stars };
}

/** What one file takes from core: the names, deep imports and namespace imports. */
interface CoreUse {
  readonly names: string[];
  readonly problems: string[];
}

/**
 * The entry points core's package.json declares: its index and `./defaults` (the defaults alone, which the CLI
 * reads at start-up without loading Redis clients).
 */
const entryPoints = Object.keys(
  (JSON.parse(read('packages/core/package.json')) as { exports: Record<string, unknown> }).exports,
).map((entry) => `@taskgate/core${entry.slice(1)}`);
const isCore = (specifier: string): boolean => entryPoints.includes(specifier);
/** An import past core's entry points: another `@taskgate/core/...`, or a path into core's folder. */
const isDeep = (specifier: string): boolean =>
  (specifier.startsWith('@taskgate/core/') && !isCore(specifier)) || /(^|\/)core\/(src|dist)(\/|$)/.test(specifier);

function coreUseOf(file: string, text: string): CoreUse {
  const names: string[] = [];
  const problems: string[] = [];
  const source = parse(file, text);
  const visit = (node: ts.Node): void => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier !== undefined) {
      const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
      if (isDeep(specifier)) problems.push(`${file}: imports '${specifier}' (use '@taskgate/core')`);
      if (isCore(specifier)) {
        const bindings = ts.isImportDeclaration(node) ? node.importClause?.namedBindings : node.exportClause;
        if (bindings === undefined || ts.isNamespaceImport(bindings) || ts.isNamespaceExport(bindings)) {
          problems.push(`${file}: takes all of '@taskgate/core' at once (name what it uses)`);
        } else {
          for (const element of bindings.elements) names.push((element.propertyName ?? element.name).text);
        }
      }
    }
    if (
      (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) ||
      ts.isImportTypeNode(node)
    ) {
      const argument = ts.isCallExpression(node) ? node.arguments[0] : node.argument;
      const literal = argument !== undefined && ts.isLiteralTypeNode(argument) ? argument.literal : argument;
      if (literal !== undefined && ts.isStringLiteral(literal) && (isDeep(literal.text) || isCore(literal.text))) {
        problems.push(`${file}: imports '${literal.text}' dynamically (import names statically)`);
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return { names, problems };
}

const exported = exportsOf(coreIndex, read(coreIndex));
const uses = filesOutsideCore().map((file) => coreUseOf(file, read(file)));
const used = new Set(uses.flatMap((use) => use.names));

describe("core's index is its public surface", () => {
  it('has its index and its defaults as entry points', () => {
    expect(entryPoints).toEqual(['@taskgate/core', '@taskgate/core/defaults']);
  });

  it('names every export (no export *)', () => {
    expect(exported.stars).toEqual([]);
    expect(exported.names.length).toBeGreaterThan(20);
  });

  it('is the only way in: no deep, namespace or dynamic import of core from another package, test or bench', () => {
    expect(uses.flatMap((use) => use.problems)).toEqual([]);
    expect(used.size).toBeGreaterThan(20);
  });

  it('exports only names that another package, test or bench uses', () => {
    expect(exported.names.filter((name) => !used.has(name)).sort()).toEqual([]);
  });

  it('catches each kind of violation (the rule is not vacuous)', () => {
    const file = 'packages/gateway/src/example.ts';
    const problems = (text: string): number => coreUseOf(file, text).problems.length;
    expect(problems("import { Keys } from '@taskgate/core/src/redis/keys.js';")).toBe(1);
    expect(problems("import { DEFAULT_KEY_PREFIX } from '@taskgate/core/defaults';")).toBe(0);
    expect(problems("import type { Keys } from '../../core/src/redis/keys.js';")).toBe(1);
    expect(problems("import * as core from '@taskgate/core';")).toBe(1);
    expect(problems("const core = await import('@taskgate/core');")).toBe(1);
    expect(problems("type K = import('@taskgate/core').Keys;")).toBe(1);
    expect(coreUseOf(file, "import { Keys, type TaskStore as Store } from '@taskgate/core';")).toEqual({
      names: ['Keys', 'TaskStore'],
      problems: [],
    });
    expect(exportsOf(file, "export * from './a.js';\nexport { b } from './b.js';")).toEqual({
      names: ['b'],
      stars: ["export * from './a.js';"],
    });
  });
});
