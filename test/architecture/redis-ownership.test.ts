import { readdirSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * core owns every Redis command: gateway, worker and bridge source speaks to Redis only through core's stores, scripts,
 * event bus and queue facade. Checked with the TypeScript type checker over every .ts file of
 * `packages/gateway/src`, `packages/worker/src` and `packages/bridge/src`:
 * - no runtime import of a Redis client library (`ioredis`, `bullmq`, `rate-limiter-flexible`): `import type` only;
 * - no call of a method on anything whose type one of those libraries declares (a connection, pipeline, queue,
 *   job, BullMQ worker...), whatever the method is called;
 * - no Redis key or channel name built there (no call of a `Keys` instance method), and no raw-channel
 *   `EventBus.subscribe` (the bus's typed `on…` methods name the channels).
 */
const root = fileURLToPath(new URL('../../', import.meta.url));
const REDIS_LIBRARIES = ['ioredis', 'bullmq', 'rate-limiter-flexible'];
const SOURCES = ['packages/gateway/src', 'packages/worker/src', 'packages/bridge/src'];

function tsFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return tsFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts') ? [path] : [];
  });
}

function isLibrary(specifier: string): boolean {
  return REDIS_LIBRARIES.some((name) => specifier === name || specifier.startsWith(`${name}/`));
}

/** Whether a declaration lives in one of the Redis libraries' packages. */
function declaredByLibrary(file: string): boolean {
  const parts = file.split(/[\\/]/);
  const at = parts.lastIndexOf('node_modules');
  return at >= 0 && REDIS_LIBRARIES.includes(parts[at + 1] ?? '');
}

const CORE_KEYS = `packages${sep}core${sep}src${sep}redis${sep}keys.ts`;
const CORE_BUS = `packages${sep}core${sep}src${sep}redis${sep}event-bus.ts`;

/** Every violation of the rule in the given files, as `path:line: what`. */
function violations(files: readonly string[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(
    join(root, 'packages/gateway/tsconfig.json'),
    {},
    { ...ts.sys, onUnRecoverableConfigFileDiagnostic: () => {} },
  );
  if (config === undefined) throw new Error('packages/gateway/tsconfig.json cannot be read');
  const program = ts.createProgram(files, { ...config.options, noEmit: true });
  const checker = program.getTypeChecker();
  const found: string[] = [];

  for (const file of files) {
    const source = program.getSourceFile(file);
    if (source === undefined) throw new Error(`${file} is not in the program`);
    const where = (node: ts.Node): string =>
      `${relative(root, file)}:${source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1}`;

    const visit = (node: ts.Node): void => {
      if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
        const clause = node.importClause;
        const typeOnly =
          clause !== undefined &&
          (clause.isTypeOnly ||
            (clause.name === undefined &&
              clause.namedBindings !== undefined &&
              ts.isNamedImports(clause.namedBindings) &&
              clause.namedBindings.elements.every((element) => element.isTypeOnly)));
        if (isLibrary(node.moduleSpecifier.text) && !typeOnly) {
          found.push(`${where(node)}: runtime import of ${node.moduleSpecifier.text}`);
        }
      }
      if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined && !node.isTypeOnly) {
        const specifier = (node.moduleSpecifier as ts.StringLiteral).text;
        if (isLibrary(specifier)) found.push(`${where(node)}: re-export of ${specifier}`);
      }
      if (ts.isCallExpression(node)) {
        const callee = node.expression;
        if (
          (callee.kind === ts.SyntaxKind.ImportKeyword || (ts.isIdentifier(callee) && callee.text === 'require')) &&
          node.arguments[0] !== undefined &&
          ts.isStringLiteral(node.arguments[0]) &&
          isLibrary(node.arguments[0].text)
        ) {
          found.push(`${where(node)}: runtime import of ${node.arguments[0].text}`);
        }
        if (ts.isPropertyAccessExpression(callee) || ts.isElementAccessExpression(callee)) {
          const method = ts.isPropertyAccessExpression(callee) ? callee.name.getText(source) : '[…]';
          const symbol = checker.getSymbolAtLocation(ts.isPropertyAccessExpression(callee) ? callee.name : callee);
          const declarations = symbol?.declarations ?? [];
          const receiver = checker.getTypeAtLocation(callee.expression);
          const receiverFiles = [
            ...(receiver.getSymbol()?.declarations ?? []),
            ...(receiver.isUnion() ? receiver.types.flatMap((t) => t.getSymbol()?.declarations ?? []) : []),
          ].map((d) => d.getSourceFile().fileName);
          const methodFiles = declarations.map((d) => d.getSourceFile().fileName);
          if ([...receiverFiles, ...methodFiles].some(declaredByLibrary)) {
            found.push(`${where(node)}: .${method}() on a Redis client library object`);
          }
          const isStatic = declarations.some(
            (d) => ts.getCombinedModifierFlags(d as ts.Declaration) & ts.ModifierFlags.Static,
          );
          if (!isStatic && methodFiles.some((f) => f.endsWith(CORE_KEYS))) {
            found.push(`${where(node)}: Keys.${method}() builds a Redis key or channel name`);
          }
          if (method === 'subscribe' && methodFiles.some((f) => f.endsWith(CORE_BUS))) {
            found.push(`${where(node)}: EventBus.subscribe() on a raw channel name`);
          }
        }
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  return found;
}

describe('core owns Redis (gateway and worker never speak to it directly)', () => {
  const files = SOURCES.flatMap((dir) => tsFiles(join(root, dir)));

  it('finds the source files', () => {
    expect(files.length).toBeGreaterThan(40);
  });

  it('has no Redis command, Redis client import, key or raw channel outside core', () => {
    expect(violations(files)).toEqual([]);
  }, 120_000);

  it('catches each kind of violation (the rule is not vacuous)', () => {
    const probe = join(root, 'test/architecture/fixtures/redis-in-gateway.ts');
    expect(violations([probe]).map((v) => v.replace(/^[^:]+:\d+: /, ''))).toEqual([
      'runtime import of bullmq',
      'runtime import of ioredis',
      '.hget() on a Redis client library object',
      '.pipeline() on a Redis client library object',
      'Keys.task() builds a Redis key or channel name',
      '.exec() on a Redis client library object',
      '.getJob() on a Redis client library object',
      'EventBus.subscribe() on a raw channel name',
    ]);
  }, 120_000);
});
