import { type ClientRequestParams, ProtocolError } from '@taskgate/protocol';
import type { Reply, RpcContext } from './context.js';

/** The scope `tools/list` cursors are signed for (tasks/list cursors are signed for an owner instead). */
const TOOLS_CURSOR_SCOPE = 'tools/list';

/**
 * `tools/list`: the live catalog entries, sorted by name, a page at a time (TOOL-1: each carries its
 * `execution.taskSupport`). Cursors are signed keyset positions, so any gateway continues any listing.
 */
export async function toolsList(ctx: RpcContext, params: ClientRequestParams<'tools/list'>): Promise<Reply> {
  const { catalog, toolCursors, options } = ctx.services;
  let after: string | undefined;
  if (params?.cursor !== undefined) {
    try {
      after = toolCursors.decode(TOOLS_CURSOR_SCOPE, params.cursor).id;
    } catch {
      throw ProtocolError.invalidParams(
        'Invalid cursor: it is not a tools/list cursor this server issued, or it expired. ' +
          'Call tools/list without a cursor to start over.',
      );
    }
  }
  const entries = await catalog.list();
  const rest = after === undefined ? entries : entries.filter((entry) => entry.tool.name > after);
  const page = rest.slice(0, options.toolsPageSize);
  const last = page.at(-1);
  const more = rest.length > page.length && last !== undefined;
  return {
    kind: 'result',
    result: {
      tools: page.map((entry) => entry.tool),
      ...(more && { nextCursor: toolCursors.encode(TOOLS_CURSOR_SCOPE, { score: 0, id: last.tool.name }) }),
    },
  };
}
