import { errorMessage, type Logger } from '@taskgate/core';
import type { StreamServices } from './stream-context.js';

/** Writes one notification on a stream; false (or a rejection) when the stream is gone. */
export type Emit = (message: Record<string, unknown>) => Promise<boolean> | boolean;

const notification = (method: string, params?: Record<string, unknown>): Record<string, unknown> =>
  params === undefined ? { jsonrpc: '2.0', method } : { jsonrpc: '2.0', method, params };

/**
 * Feeds a session's GET stream what happens to resources and prompts: `notifications/resources/list_changed`
 * and `notifications/prompts/list_changed` when workers register offerings, and
 * `notifications/resources/updated` for the URIs the session subscribed to (on any gateway) when a worker
 * announces a change. The subscribed URIs are kept in memory and re-read whenever the session's
 * subscriptions channel says they changed, after every reconnect, and once the channels are live, so an
 * update costs no Redis round trip. Resolves with the functions that end the feed.
 */
export async function subscribeResourceNotices(
  services: StreamServices,
  sessionId: string,
  emit: Emit,
  logger: Logger,
): Promise<(() => Promise<void>)[]> {
  const { bus, subscriptions } = services;
  let subscribed = new Set<string>();
  let generation = 0;
  const send = (message: Record<string, unknown>): void => {
    Promise.resolve(emit(message)).catch(() => false);
  };
  // Reads answer in the order they were sent (one connection), so the latest read started is the one to keep.
  const refresh = (): void => {
    const mine = ++generation;
    subscriptions.list(sessionId).then(
      (uris) => {
        if (mine === generation) subscribed = new Set(uris);
      },
      (error: unknown) => logger.warn({ err: errorMessage(error) }, 'could not read resource subscriptions'),
    );
  };

  const stops: (() => Promise<void>)[] = [];
  const removeHook = bus.onReconnect(refresh);
  stops.push(async () => void removeHook());
  try {
    stops.push(await bus.onSessionSubscriptionsChange(sessionId, refresh));
    stops.push(
      await bus.onResourceUpdated((uri) => {
        if (subscribed.has(uri)) send(notification('notifications/resources/updated', { uri }));
      }),
    );
    stops.push(
      await bus.onCatalogChange('resources', () => send(notification('notifications/resources/list_changed'))),
    );
    stops.push(await bus.onCatalogChange('prompts', () => send(notification('notifications/prompts/list_changed'))));
  } catch (error) {
    await Promise.allSettled(stops.map((stop) => stop()));
    throw error;
  }
  refresh();
  return stops;
}
