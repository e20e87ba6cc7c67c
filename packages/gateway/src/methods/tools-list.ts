import type { ClientRequestParams } from '@taskgate/protocol';
import { catalogPage } from './catalog-page.js';
import type { Reply, RpcContext } from './context.js';

/**
 * `tools/list`: the live catalog entries, sorted by name, a page at a time (TOOL-1: each carries its
 * `execution.taskSupport`). Cursors are signed keyset positions, so any gateway continues any listing.
 */
export async function toolsList(ctx: RpcContext, params: ClientRequestParams<'tools/list'>): Promise<Reply> {
  const { catalog, toolCursors, options } = ctx.services;
  const page = catalogPage(
    toolCursors,
    'tools/list',
    await catalog.list(),
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
