import { TaskgateError } from '@taskgate/core';
import type { AnyToolDefinition } from './define-tool.js';

/** How long a job of a later queue waits for its tool to be published before it fails as unknown (ms). */
const LATER_TOOL_WAIT_MS = 15_000;

/**
 * The tools a worker runs: those it was created with, and those published at run time in groups (an upstream
 * MCP server's), each group replacing what it published before.
 */
export class LiveTools {
  /** Every tool by name, as the job runner looks them up. */
  readonly byName: Map<string, AnyToolDefinition>;
  /** Names of the tools each group published last. */
  readonly #groups = new Map<string, readonly string[]>();
  /** Jobs waiting for their tool to be published (a job taken before its upstream was listed). */
  readonly #waiting = new Set<() => void>();

  constructor(tools: readonly AnyToolDefinition[]) {
    this.byName = new Map(tools.map((tool) => [tool.name, tool]));
  }

  /** Every tool now. */
  all(): AnyToolDefinition[] {
    return [...this.byName.values()];
  }

  /** The tool named so, once published: resolves undefined when it is not within the wait. */
  waitFor(name: string): Promise<AnyToolDefinition | undefined> {
    return new Promise((resolve) => {
      const deadline = Date.now() + LATER_TOOL_WAIT_MS;
      const check = (): void => {
        const tool = this.byName.get(name);
        if (tool === undefined && Date.now() < deadline) return;
        clearTimeout(timer);
        this.#waiting.delete(check);
        resolve(tool);
      };
      const timer = setTimeout(check, LATER_TOOL_WAIT_MS);
      this.#waiting.add(check);
      check();
    });
  }

  /** Puts `tools` in place of what `group` published before; true when a tool of the group went away. */
  publish(group: string, tools: readonly AnyToolDefinition[]): boolean {
    const before = this.#groups.get(group) ?? [];
    for (const tool of tools) {
      const owner = this.byName.get(tool.name);
      if (owner !== undefined && !before.includes(tool.name) && owner !== tool) {
        throw new TaskgateError('INVALID_CONFIG', `Two tools are named '${tool.name}': tool names must be unique`);
      }
    }
    for (const name of before) this.byName.delete(name);
    for (const tool of tools) this.byName.set(tool.name, tool);
    this.#groups.set(
      group,
      tools.map((tool) => tool.name),
    );
    for (const check of [...this.#waiting]) check();
    return before.some((name) => !this.byName.has(name));
  }
}
