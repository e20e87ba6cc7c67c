import {
  McpError,
  type Prompt as UpstreamPrompt,
  type Resource as UpstreamResource,
  type ResourceTemplate as UpstreamTemplate,
} from '@modelcontextprotocol/sdk/types.js';
import type { Logger } from '@taskgate/core';
import { ProtocolError } from '@taskgate/protocol';
import {
  type AnyPromptDefinition,
  type AnyResourceDefinition,
  definePrompt,
  defineResource,
  defineResourceTemplate,
  type PromptReturn,
  type ResourceReturn,
} from '@taskgate/worker';
import { z } from 'zod';
import { asV1Error } from './rev2026-07-28-call.js';
import type { UpstreamServerConfig } from './server-config.js';
import type { UpstreamPool } from './upstream-pool.js';
import type { UpstreamRequests } from './upstream-session.js';

/** How long a read waits for a server that is (re)starting before it fails (ms). */
const READ_WAIT_MS = 5000;

/** What an upstream offers besides tools, all pages of each list. */
export interface UpstreamReads {
  readonly resources: UpstreamResource[];
  readonly templates: UpstreamTemplate[];
  readonly prompts: UpstreamPrompt[];
}

async function allPages<T>(page: (cursor?: string) => Promise<{ items: T[]; nextCursor?: string | undefined }>) {
  const items: T[] = [];
  let cursor: string | undefined;
  do {
    const next = await page(cursor);
    items.push(...next.items);
    cursor = next.nextCursor;
  } while (cursor !== undefined);
  return items;
}

/** The resources, templates and prompts the upstream declares and lists (none of a kind it does not declare). */
export async function listAllReads(client: UpstreamRequests): Promise<UpstreamReads> {
  const capabilities = client.getServerCapabilities() ?? {};
  const params = (cursor?: string) => (cursor === undefined ? {} : { cursor });
  const [resources, templates, prompts] = await Promise.all([
    capabilities.resources === undefined
      ? []
      : allPages(async (cursor) => {
          const page = await client.listResources(params(cursor));
          return { items: page.resources, nextCursor: page.nextCursor };
        }),
    capabilities.resources === undefined
      ? []
      : allPages(async (cursor) => {
          const page = await client.listResourceTemplates(params(cursor));
          return { items: page.resourceTemplates, nextCursor: page.nextCursor };
        }),
    capabilities.prompts === undefined
      ? []
      : allPages(async (cursor) => {
          const page = await client.listPrompts(params(cursor));
          return { items: page.prompts, nextCursor: page.nextCursor };
        }),
  ]);
  return { resources, templates, prompts };
}

/** Runs `work` on a session of the server; the upstream's JSON-RPC errors reach the client as it sent them. */
async function onUpstream<T>(pool: UpstreamPool, work: (client: UpstreamRequests) => Promise<T>): Promise<T> {
  const lease = await pool.acquire(READ_WAIT_MS);
  try {
    return await work(lease.session.client);
  } catch (thrown) {
    const error = asV1Error(thrown);
    if (error instanceof McpError) {
      throw new ProtocolError(error.code, error.message.replace(/^MCP error -?\d+: /, ''), error.data);
    }
    throw error;
  } finally {
    await lease.release();
  }
}

/** The described fields of an upstream offering, its name under the prefix. */
function described(server: UpstreamServerConfig, item: UpstreamResource | UpstreamTemplate) {
  return {
    name: `${server.prefix}${item.name}`,
    ...(item.title !== undefined && { title: item.title }),
    ...(item.description !== undefined && { description: item.description }),
    ...(item.mimeType !== undefined && { mimeType: item.mimeType }),
    queue: `upstream-reads.${server.name}`,
    ...(server.allow !== undefined && { allow: server.allow }),
  };
}

/**
 * The upstream's resources, templates and prompts as taskgate offerings: resources keep their URIs, names
 * and prompt names get the prefix; each read or get goes to the upstream (`resources/read`, `prompts/get`).
 */
export function upstreamReadDefinitions(
  server: UpstreamServerConfig,
  reads: UpstreamReads,
  pool: UpstreamPool,
  logger: Logger,
): { resources: AnyResourceDefinition[]; prompts: AnyPromptDefinition[] } {
  const resources: AnyResourceDefinition[] = [];
  const prompts: AnyPromptDefinition[] = [];
  const attempt = (what: string, make: () => void): void => {
    try {
      make();
    } catch (error) {
      logger.warn(
        { server: server.name, offering: what, err: (error as Error).message },
        'upstream offering not offered',
      );
    }
  };
  const read = (uri: string, signal: AbortSignal): Promise<ResourceReturn> =>
    onUpstream(pool, async (client) => {
      const result = await client.readResource({ uri }, { signal });
      return { contents: result.contents } as ResourceReturn;
    });
  for (const resource of reads.resources) {
    attempt(resource.uri, () =>
      resources.push(
        defineResource({ ...described(server, resource), uri: resource.uri, read: (ctx) => read(ctx.uri, ctx.signal) }),
      ),
    );
  }
  for (const template of reads.templates) {
    attempt(template.uriTemplate, () =>
      resources.push(
        defineResourceTemplate({
          ...described(server, template),
          uriTemplate: template.uriTemplate,
          read: (_variables, ctx) => read(ctx.uri, ctx.signal),
        }),
      ),
    );
  }
  for (const prompt of reads.prompts) {
    const shape = Object.fromEntries(
      (prompt.arguments ?? []).map((argument) => {
        const text = argument.required === true ? z.string() : z.string().optional();
        return [argument.name, argument.description === undefined ? text : text.describe(argument.description)];
      }),
    );
    attempt(prompt.name, () =>
      prompts.push(
        definePrompt({
          name: `${server.prefix}${prompt.name}`,
          ...(prompt.title !== undefined && { title: prompt.title }),
          ...(prompt.description !== undefined && { description: prompt.description }),
          arguments: z.object(shape),
          queue: `upstream-reads.${server.name}`,
          ...(server.allow !== undefined && { allow: server.allow }),
          get: (args, ctx) =>
            onUpstream(pool, async (client) => {
              const result = await client.getPrompt(
                { name: prompt.name, arguments: args as Record<string, string> },
                { signal: ctx.signal },
              );
              return result as unknown as PromptReturn;
            }),
        }) as AnyPromptDefinition,
      ),
    );
  }
  return { resources, prompts };
}
