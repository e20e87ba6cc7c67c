import { type ListCursorCodec, type ToolCatalog, visibleTo } from '@taskgate/core';
import type { ClientRequestParams } from '@taskgate/protocol';
import { catalogPage } from './catalog-page.js';
import type { Call, HandlerAnswer } from './context.js';

/** What `tools/list` uses. */
export interface ToolsListServices {
  readonly catalog: ToolCatalog;
  readonly toolCursors: ListCursorCodec;
  readonly options: { readonly toolsPageSize: number };
}

/**
 * `tools/list`: the live catalog entries the caller may see (`allow`), sorted by name, a page at a time
 * (TOOL-1: each carries its `execution.taskSupport`). Cursors are signed keyset positions, so any gateway
 * continues any listing.
 */
export async function toolsList(
  ctx: Call<ToolsListServices>,
  params: ClientRequestParams<'tools/list'>,
): Promise<HandlerAnswer> {
  const { catalog, toolCursors, options } = ctx.services;
  const page = catalogPage(
    toolCursors,
    'tools/list',
    (await catalog.list()).filter((entry) => visibleTo(entry, ctx.principal)),
    (entry) => entry.tool.name,
    options.toolsPageSize,
    params?.cursor,
  );
  return {
    kind: 'result',
    result: {
      tools: page.items.map((entry) => entry.tool),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    },
  };
}
