import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { Tool as UpstreamTool } from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@taskgate/core';
import type { CallToolResult } from '@taskgate/protocol';
import { type AnyToolDefinition, defineTool, type ToolContext } from '@taskgate/worker';
import type { UpstreamServerConfig } from './server-config.js';
import type { UpstreamRequests } from './upstream-session.js';

/** The dialect the gateways validate arguments in (MCP's default); other `$schema` values are dropped. */
const DIALECT_2020 = 'https://json-schema.org/draft/2020-12/schema';
/** Re-runs after bridge crashes a tool called as an upstream task may have: each follows the same upstream task. */
const RESUMES = 100;

/** Every tool the upstream lists, all pages. */
export async function listAllTools(client: UpstreamRequests): Promise<UpstreamTool[]> {
  const tools: UpstreamTool[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor === undefined ? {} : { cursor });
    tools.push(...page.tools);
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return tools;
}

/** A glob over upstream tool names: `*` any run of characters, `?` one. */
function globRegex(glob: string): RegExp {
  const source = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${source}$`);
}

/** Whether the config's `tools.include` / `tools.exclude` let `name` through. */
export function toolSelected(server: UpstreamServerConfig, name: string): boolean {
  const { include, exclude } = server.tools;
  if (include !== undefined && !include.some((glob) => globRegex(glob).test(name))) return false;
  return !exclude.some((glob) => globRegex(glob).test(name));
}

/** Whether the upstream runs `tool` as a task when asked (2025-11-25: capability and the tool's own taskSupport). */
export function upstreamRunsTasks(client: Client, tool: UpstreamTool): boolean {
  const capable = client.getServerCapabilities()?.tasks?.requests?.tools?.call !== undefined;
  const support = tool.execution?.taskSupport;
  return capable && (support === 'optional' || support === 'required');
}

/** A JSON Schema as the gateways read it: without a `$schema` other than 2020-12. */
function schemaFor(schema: Record<string, unknown>): Record<string, unknown> {
  const { $schema, ...rest } = schema;
  return $schema === DIALECT_2020 ? schema : JSON.parse(JSON.stringify(rest));
}

/** How an upstream tool is run: the execution of one call, given the upstream tool and the task's context. */
export type UpstreamRun = (
  tool: UpstreamTool,
  asTask: boolean,
  args: Record<string, unknown>,
  ctx: ToolContext,
) => Promise<CallToolResult>;

/**
 * The tools of one upstream as taskgate tools: the selected ones, named `prefix + name`, with their title,
 * description, schemas and annotations, `execution.taskSupport` from the config, all on the server's queue.
 * A tool the upstream runs as a task is re-run after a bridge crash (it resumes the upstream task); others
 * only with the override's `retryOnCrash`.
 */
export function upstreamToolDefinitions(
  server: UpstreamServerConfig,
  tools: readonly UpstreamTool[],
  asTask: (tool: UpstreamTool) => boolean,
  run: UpstreamRun,
  logger: Logger,
): AnyToolDefinition[] {
  const definitions: AnyToolDefinition[] = [];
  for (const tool of tools) {
    if (!toolSelected(server, tool.name)) continue;
    const override = server.tools.overrides[tool.name] ?? {};
    const task = asTask(tool);
    const title = override.title ?? tool.title ?? tool.annotations?.title;
    try {
      const definition = defineTool({
        name: `${server.prefix}${tool.name}`,
        ...(title !== undefined && { title }),
        description: override.description ?? (tool.description?.trim() || title || tool.name),
        inputSchema: schemaFor(tool.inputSchema) as { type: 'object' },
        taskSupport: override.taskSupport ?? server.taskSupport,
        ...(tool.annotations !== undefined && { annotations: tool.annotations }),
        queue: `upstream.${server.name}`,
        ...(server.queueShards !== undefined && { queueShards: server.queueShards }),
        attempts: 1,
        retryOnCrash: task ? RESUMES : (override.retryOnCrash ?? false),
        concurrency: server.concurrency,
        timeoutMs: server.timeoutMs,
        ...(server.inlineWaitMs !== undefined && { inlineWaitMs: server.inlineWaitMs }),
        ...(server.allow !== undefined && { allow: server.allow }),
        handler: (args, ctx) => run(tool, task, args, ctx),
      });
      definitions.push(
        Object.freeze({
          ...definition,
          ...(tool.outputSchema !== undefined && { outputJsonSchema: schemaFor(tool.outputSchema) }),
        }) as AnyToolDefinition,
      );
    } catch (error) {
      logger.warn({ server: server.name, tool: tool.name, err: (error as Error).message }, 'upstream tool not offered');
    }
  }
  return definitions;
}
