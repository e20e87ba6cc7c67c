import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyToolDefinition } from '@taskgate/worker';

/**
 * Imports tool modules: a package name (`@taskgate/examples`) or a file path. A module offers its tools as
 * a `tools` array export or as its default export (an array or one tool).
 */
export async function loadTools(specifiers: readonly string[]): Promise<AnyToolDefinition[]> {
  const tools: AnyToolDefinition[] = [];
  for (const specifier of specifiers) {
    const target =
      specifier.startsWith('.') || isAbsolute(specifier) ? pathToFileURL(resolve(specifier)).href : specifier;
    let module: Record<string, unknown>;
    try {
      module = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`Could not load tools from '${specifier}': ${(error as Error).message}`);
    }
    const exported = module.tools ?? module.default;
    const list = Array.isArray(exported) ? exported : exported === undefined ? [] : [exported];
    if (list.length === 0) {
      throw new Error(`'${specifier}' exports no tools: export an array named 'tools' (or a default export)`);
    }
    tools.push(...(list as AnyToolDefinition[]));
  }
  const names = new Set<string>();
  for (const tool of tools) {
    if (names.has(tool.name)) throw new Error(`Two tools are named '${tool.name}'`);
    names.add(tool.name);
  }
  return tools;
}
