import type { CatalogKind } from '@taskgate/core';
import { META_SUBSCRIPTION_ID, type RequestId } from '@taskgate/protocol';
import type { Response } from 'express';
import type { GatewayServices } from '../services/context.js';
import { SseStream } from '../transport/sse-stream.js';

/** The list-changed news a `subscriptions/listen` filter may ask for, and the catalog kind behind each. */
const FILTERS: readonly { readonly flag: string; readonly kind: CatalogKind; readonly method: string }[] = [
  { flag: 'toolsListChanged', kind: 'tools', method: 'notifications/tools/list_changed' },
  { flag: 'promptsListChanged', kind: 'prompts', method: 'notifications/prompts/list_changed' },
  { flag: 'resourcesListChanged', kind: 'resources', method: 'notifications/resources/list_changed' },
];

/**
 * `subscriptions/listen`: a long-lived SSE stream that first acknowledges the filter it honours, then relays
 * the list-changed news the filter asked for (and only those), each tagged with the subscription's id (the
 * request's JSON-RPC id). Workers' catalog registrations reach every gateway through Redis pub/sub, so the
 * stream may be on any pod. It ends when the client goes away or the gateway drains.
 */
export async function listen(
  services: GatewayServices,
  res: Response,
  id: RequestId,
  params: Record<string, unknown>,
): Promise<void> {
  const asked = (
    typeof params.notifications === 'object' && params.notifications !== null ? params.notifications : {}
  ) as Record<string, unknown>;
  const honoured = FILTERS.filter((filter) => asked[filter.flag] === true);
  const meta = { [META_SUBSCRIPTION_ID]: id };
  const stream = new SseStream(res);
  services.streams.add(stream, 'session');
  const unsubscribes = await Promise.all(
    honoured.map((filter) =>
      services.bus.onCatalogChange(filter.kind, () => {
        stream.send({ jsonrpc: '2.0', method: filter.method, params: { _meta: meta } });
      }),
    ),
  );
  stream.send({
    jsonrpc: '2.0',
    method: 'notifications/subscriptions/acknowledged',
    params: { _meta: meta, notifications: Object.fromEntries(honoured.map((filter) => [filter.flag, true])) },
  });
  if (stream.isOpen) await new Promise<void>((resolve) => stream.signal.addEventListener('abort', () => resolve()));
  await Promise.all(unsubscribes.map((unsubscribe) => unsubscribe().catch(() => {})));
}
