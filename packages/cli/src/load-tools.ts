import { isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AnyPromptDefinition, AnyResourceDefinition, AnyToolDefinition } from '@taskgate/worker';

/** What worker modules offer: tools, resources (and resource templates), prompts. */
export interface LoadedOfferings {
  readonly tools: AnyToolDefinition[];
  readonly resources: AnyResourceDefinition[];
  readonly prompts: AnyPromptDefinition[];
}

function kindOf(value: unknown): string | undefined {
  const kind = (value as { kind?: unknown } | null)?.kind;
  return typeof kind === 'string' ? kind : undefined;
}

/**
 * Imports worker modules: a package name (`@taskgate/examples`) or a file path. A module offers its
 * definitions as `tools`, `resources` and `prompts` array exports, or as its default export (an array, or
 * one definition); each definition is sorted by what made it (defineTool, defineResource,
 * defineResourceTemplate, definePrompt).
 */
export async function loadOfferings(specifiers: readonly string[]): Promise<LoadedOfferings> {
  const loaded: LoadedOfferings = { tools: [], resources: [], prompts: [] };
  for (const specifier of specifiers) {
    const target =
      specifier.startsWith('.') || isAbsolute(specifier) ? pathToFileURL(resolve(specifier)).href : specifier;
    let module: Record<string, unknown>;
    try {
      module = (await import(target)) as Record<string, unknown>;
    } catch (error) {
      throw new Error(`Could not load tools from '${specifier}': ${(error as Error).message}`);
    }
    const named = [module.tools, module.resources, module.prompts].filter((value) => value !== undefined);
    const exported = named.length > 0 ? named.flat() : module.default;
    const list: unknown[] = Array.isArray(exported) ? exported : exported === undefined ? [] : [exported];
    if (list.length === 0) {
      throw new Error(
        `'${specifier}' exports nothing to serve: export arrays named 'tools', 'resources' or 'prompts' (or a default export)`,
      );
    }
    for (const item of list) {
      const kind = kindOf(item);
      if (kind === 'resource' || kind === 'resourceTemplate') loaded.resources.push(item as AnyResourceDefinition);
      else if (kind === 'prompt') loaded.prompts.push(item as AnyPromptDefinition);
      else loaded.tools.push(item as AnyToolDefinition);
    }
  }
  const names = new Set<string>();
  for (const tool of loaded.tools) {
    if (names.has(tool.name)) throw new Error(`Two tools are named '${tool.name}'`);
    names.add(tool.name);
  }
  return loaded;
}
