import { type OfferingCatalog, type ResourceSubscriptions, visibleTo } from '@taskgate/core';
import { type ClientRequestParams, ErrorCode, ProtocolError } from '@taskgate/protocol';
import { catalogPage } from './catalog-page.js';
import type { Call, HandlerAnswer } from './context.js';
import type { OfferingListServices, OfferingReadServices } from './prompts.js';
import { runReadJob } from './read-job.js';

/** Most resources one session may subscribe to: each subscription is a field of the session's hash. */
export const MAX_SUBSCRIPTIONS_PER_SESSION = 1000;

/** What `resources/subscribe` and `resources/unsubscribe` use. */
export interface SubscribeServices {
  readonly offerings: OfferingCatalog;
  readonly subscriptions: ResourceSubscriptions;
}

const empty: HandlerAnswer = { kind: 'result', result: {} };

function resourceNotFound(uri: string): ProtocolError {
  return new ProtocolError(
    ErrorCode.ResourceNotFound,
    `Resource not found: ${uri}. Call resources/list and resources/templates/list to see what can be read.`,
    { uri },
  );
}

/** `resources/list`: the static resources workers offer that the caller may see (`allow`), sorted by URI, a page at a time. */
export async function resourcesList(
  ctx: Call<OfferingListServices>,
  params: ClientRequestParams<'resources/list'>,
): Promise<HandlerAnswer> {
  const { offerings, toolCursors, options } = ctx.services;
  const page = catalogPage(
    toolCursors,
    'resources/list',
    (await offerings.resources.list()).filter((entry) => visibleTo(entry, ctx.principal)),
    (entry) => entry.resource.uri,
    options.toolsPageSize,
    params?.cursor,
  );
  return {
    kind: 'result',
    result: {
      resources: page.items.map((entry) => entry.resource),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    },
  };
}

/** `resources/templates/list`: the resource templates workers offer that the caller may see, sorted by URI template. */
export async function resourceTemplatesList(
  ctx: Call<OfferingListServices>,
  params: ClientRequestParams<'resources/templates/list'>,
): Promise<HandlerAnswer> {
  const { offerings, toolCursors, options } = ctx.services;
  const page = catalogPage(
    toolCursors,
    'resources/templates/list',
    (await offerings.templates.list()).filter((entry) => visibleTo(entry, ctx.principal)),
    (entry) => entry.template.uriTemplate,
    options.toolsPageSize,
    params?.cursor,
  );
  return {
    kind: 'result',
    result: {
      resourceTemplates: page.items.map((entry) => entry.template),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    },
  };
}

/**
 * `resources/read`: the static resource with that URI, else the first template describing it; a worker of
 * its read queue reads it. -32002 when no live worker offers the URI to the caller (`allow`).
 */
export async function resourcesRead(
  ctx: Call<OfferingReadServices>,
  params: ClientRequestParams<'resources/read'>,
): Promise<HandlerAnswer> {
  const { uri } = params;
  const resolved = await ctx.services.offerings.resolve(uri, ctx.principal);
  if (resolved === undefined) throw resourceNotFound(uri);
  const read =
    resolved.kind === 'resource'
      ? { method: 'resources/read' as const, uri }
      : { method: 'resources/read' as const, uri, uriTemplate: resolved.entry.template.uriTemplate };
  return { kind: 'result', result: await runReadJob(ctx, resolved.entry.queue, read) };
}

/**
 * `resources/subscribe`: records the subscription in the session (Redis), so that whichever gateway holds
 * the session's GET stream relays `notifications/resources/updated` for the URI. The URI must be one a
 * worker serves (-32002 otherwise).
 */
export async function resourcesSubscribe(
  ctx: Call<SubscribeServices>,
  params: ClientRequestParams<'resources/subscribe'>,
): Promise<HandlerAnswer> {
  const { services, session } = ctx;
  if ((await services.offerings.resolve(params.uri, ctx.principal)) === undefined) throw resourceNotFound(params.uri);
  const current = await services.subscriptions.list(session.sessionId);
  if (!current.includes(params.uri) && current.length >= MAX_SUBSCRIPTIONS_PER_SESSION) {
    throw ProtocolError.invalidParams(
      `Too many subscriptions: a session may subscribe to at most ${MAX_SUBSCRIPTIONS_PER_SESSION} resources. ` +
        'Unsubscribe from some first.',
    );
  }
  await services.subscriptions.subscribe(session.sessionId, params.uri);
  return empty;
}

/** `resources/unsubscribe`: drops the subscription (a URI never subscribed is fine). */
export async function resourcesUnsubscribe(
  ctx: Call<SubscribeServices>,
  params: ClientRequestParams<'resources/unsubscribe'>,
): Promise<HandlerAnswer> {
  await ctx.services.subscriptions.unsubscribe(ctx.session.sessionId, params.uri);
  return empty;
}
