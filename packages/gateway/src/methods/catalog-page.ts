import type { ListCursorCodec } from '@taskgate/core';
import { ProtocolError } from '@taskgate/protocol';

/** One page of a catalog listing and the cursor of the next, if any. */
export interface CatalogPage<E> {
  readonly items: E[];
  readonly nextCursor?: string;
}

/**
 * A page of a live catalog listing sorted by key (`tools/list`, `resources/list`, `resources/templates/list`,
 * `prompts/list`). Cursors are keyset positions signed for the method, so any gateway continues any listing
 * and a cursor of one list is refused by another (-32602).
 */
export function catalogPage<E>(
  cursors: ListCursorCodec,
  method: string,
  entries: readonly E[],
  keyOf: (entry: E) => string,
  pageSize: number,
  cursor: string | undefined,
): CatalogPage<E> {
  let after: string | undefined;
  if (cursor !== undefined) {
    try {
      after = cursors.decode(method, cursor).id;
    } catch {
      throw ProtocolError.invalidParams(
        `Invalid cursor: it is not a ${method} cursor this server issued, or it expired. ` +
          `Call ${method} without a cursor to start over.`,
      );
    }
  }
  const rest = after === undefined ? entries : entries.filter((entry) => keyOf(entry) > after);
  const items = rest.slice(0, pageSize);
  const last = items.at(-1);
  if (rest.length <= items.length || last === undefined) return { items };
  return { items, nextCursor: cursors.encode(method, { score: 0, id: keyOf(last) }) };
}
