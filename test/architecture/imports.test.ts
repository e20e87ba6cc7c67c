import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));
const packagesDir = join(root, 'packages');

/**
 * The layers of `packages/gateway/src`, bottom first: a folder (or a file at the top of `src`, without its
 * extension) imports only from its own folder and from layers listed before it. docs/architecture.md shows
 * the same order.
 */
const GATEWAY_LAYERS = [
  'defaults',
  'options',
  'messages',
  'auth',
  'ops',
  'tasks',
  'streams',
  'methods',
  'wire',
  'run',
  'http',
  'admin',
  'gateway',
  'index',
] as const;

/**
 * The layers of `packages/core/src`, bottom first; the folders of one layer stand side by side. A file imports only
 * from its own folder and from layers below its layer — never from a folder beside it or above it. `errors` and
 * `index` (the one export surface) are files at the top of `src`. docs/architecture.md shows the same order.
 */
const CORE_LAYERS: readonly (readonly string[])[] = [
  ['errors', 'defaults'],
  ['telemetry'],
  ['redis'],
  ['limits'],
  ['tasks'],
  ['sessions', 'streams', 'queues', 'catalog'],
  ['admin', 'bridge', 'metrics'],
  ['index'],
];

/**
 * The workspace packages each package's source may import (`protocol` ← `core` ← `gateway`, `worker` ← `bridge` ←
 * `cli`; `dev-redis`, the redis-server launcher of `taskgate dev` and the tests, imports none).
 */
const PACKAGE_DEPENDENCIES: Readonly<Record<string, readonly string[]>> = {
  protocol: [],
  core: ['protocol'],
  'dev-redis': [],
  console: [],
  gateway: ['protocol', 'core', 'console'],
  worker: ['protocol', 'core'],
  examples: ['protocol', 'worker'],
  'conformance-fixture': ['protocol', 'worker'],
  bridge: ['protocol', 'core', 'worker'],
  cli: ['protocol', 'core', 'gateway', 'worker', 'bridge', 'examples', 'dev-redis'],
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

/** Every import, re-export and dynamic import of a file, type-only ones included. */
function specifiers(file: string): string[] {
  return ts.preProcessFile(readFileSync(file, 'utf8'), true, true).importedFiles.map((ref) => ref.fileName);
}

const packages = readdirSync(packagesDir, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** file → the files of the same package it imports (relative specifiers, `.js` written for `.ts`). */
const graph = new Map<string, string[]>();
/** package → the workspace packages its source imports. */
const packageImports = new Map<string, Set<string>>();
for (const pkg of packages) {
  const imported = new Set<string>();
  packageImports.set(pkg, imported);
  for (const file of sourceFiles(join(packagesDir, pkg, 'src'))) {
    const local: string[] = [];
    for (const specifier of specifiers(file)) {
      const workspace = /^@taskgate\/([^/]+)/.exec(specifier);
      if (workspace?.[1] !== undefined) imported.add(workspace[1]);
      if (specifier.startsWith('.')) local.push(resolve(dirname(file), specifier.replace(/\.js$/, '.ts')));
    }
    graph.set(file, local);
  }
}

const name = (file: string): string => relative(root, file);

/** Every import cycle between files, each once, as the chain of files. */
function cycles(): string[][] {
  const found: string[][] = [];
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (file: string): void => {
    state.set(file, 'open');
    path.push(file);
    for (const next of graph.get(file) ?? []) {
      if (state.get(next) === 'open') found.push([...path.slice(path.indexOf(next)), next].map(name));
      else if (state.get(next) === undefined && graph.has(next)) visit(next);
    }
    path.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (state.get(file) === undefined) visit(file);
  return found;
}

const gatewaySrc = join(packagesDir, 'gateway', 'src');

/** The layer of a gateway source file: its top folder, or its own name for a file at the top of `src`. */
function layerOf(file: string): string {
  return relative(gatewaySrc, file).split('/')[0]?.replace(/\.ts$/, '') ?? '';
}

const coreSrc = join(packagesDir, 'core', 'src');

/** The top folder of a core source file, or its own name for a file at the top of `src`. */
function coreFolderOf(file: string): string {
  return relative(coreSrc, file).split('/')[0]?.replace(/\.ts$/, '') ?? '';
}

/** Index of the core layer that declares a folder (or top file) of core's `src`; -1 when none does. */
function coreLayer(folder: string): number {
  return CORE_LAYERS.findIndex((layer) => layer.includes(folder));
}

/** Every folder under `dir` (itself included) that holds exactly one file. */
function singleFileFolders(dir: string): string[] {
  const entries = readdirSync(dir, { withFileTypes: true });
  const own = entries.filter((entry) => entry.isFile()).length === 1 ? [name(dir)] : [];
  return [
    ...own,
    ...entries.filter((entry) => entry.isDirectory()).flatMap((entry) => singleFileFolders(join(dir, entry.name))),
  ];
}

describe('imports', () => {
  it('found the source files', () => {
    expect(packages).toEqual(expect.arrayContaining(Object.keys(PACKAGE_DEPENDENCIES)));
    expect(graph.size).toBeGreaterThan(100);
  });

  it('form no cycle between files', () => {
    expect(cycles()).toEqual([]);
  });

  it('between packages point only down', () => {
    const upward: string[] = [];
    for (const [pkg, imported] of packageImports) {
      const allowed = PACKAGE_DEPENDENCIES[pkg];
      if (allowed === undefined) {
        upward.push(`${pkg}: not in the declared package order`);
        continue;
      }
      for (const dependency of imported) {
        if (dependency !== pkg && !allowed.includes(dependency)) upward.push(`${pkg} → ${dependency}`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('between gateway layers point only down', () => {
    const upward: string[] = [];
    for (const [file, imported] of graph) {
      if (!file.startsWith(gatewaySrc)) continue;
      const from = layerOf(file);
      const fromIndex = GATEWAY_LAYERS.indexOf(from as (typeof GATEWAY_LAYERS)[number]);
      if (fromIndex < 0) {
        upward.push(`${name(file)}: layer '${from}' is not declared`);
        continue;
      }
      for (const target of imported) {
        const to = layerOf(target);
        if (to === from) continue;
        const toIndex = GATEWAY_LAYERS.indexOf(to as (typeof GATEWAY_LAYERS)[number]);
        if (toIndex < 0 || toIndex > fromIndex) upward.push(`${name(file)} (${from}) → ${name(target)} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('keep the HTTP framework out of the codecs: no file under gateway wire/ imports express', () => {
    const wire = join(gatewaySrc, 'wire');
    const framework = [...graph.keys()]
      .filter((file) => file.startsWith(`${wire}/`))
      .flatMap((file) =>
        specifiers(file)
          .filter((specifier) => /^express(\/|$)/.test(specifier))
          .map(() => name(file)),
      );
    expect(sourceFiles(wire).length).toBeGreaterThan(10);
    expect(framework).toEqual([]);
  });

  it('declare every folder and top file of core, each once', () => {
    const present = readdirSync(coreSrc, { withFileTypes: true }).map((entry) => entry.name.replace(/\.ts$/, ''));
    const declared = CORE_LAYERS.flat();
    expect([...declared].sort()).toEqual([...present].sort());
    expect(new Set(declared).size).toBe(declared.length);
  });

  it('between core layers point only down', () => {
    const upward: string[] = [];
    for (const [file, imported] of graph) {
      if (!file.startsWith(coreSrc)) continue;
      const from = coreFolderOf(file);
      const fromIndex = coreLayer(from);
      if (fromIndex < 0) {
        upward.push(`${name(file)}: layer '${from}' is not declared`);
        continue;
      }
      for (const target of imported) {
        const to = coreFolderOf(target);
        if (to === from) continue;
        const toIndex = coreLayer(to);
        if (toIndex < 0 || toIndex >= fromIndex) upward.push(`${name(file)} (${from}) → ${name(target)} (${to})`);
      }
    }
    expect(upward).toEqual([]);
  });

  it('leave no folder of core holding a single file', () => {
    expect(singleFileFolders(coreSrc)).toEqual([]);
  });
});
