import { type ListCursorCodec, type OfferingCatalog, visibleTo } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError } from '@taskgate/protocol';
import { catalogPage } from './catalog-page.js';
import type { Call, HandlerAnswer } from './context.js';
import { type ReadServices, runReadJob } from './read-job.js';

/** What the listings of offerings use (prompts, resources, resource templates). */
export interface OfferingListServices {
  readonly offerings: OfferingCatalog;
  readonly toolCursors: ListCursorCodec;
  readonly options: { readonly toolsPageSize: number };
}

/** What the reads of offerings use (prompts/get, resources/read, completion/complete). */
export interface OfferingReadServices extends ReadServices {
  readonly offerings: OfferingCatalog;
}

/** `prompts/list`: the prompts workers offer that the caller may see (`allow`), sorted by name, a page at a time. */
export async function promptsList(
  ctx: Call<OfferingListServices>,
  params: ClientRequestParams<'prompts/list'>,
): Promise<HandlerAnswer> {
  const { offerings, toolCursors, options } = ctx.services;
  const page = catalogPage(
    toolCursors,
    'prompts/list',
    (await offerings.prompts.list()).filter((entry) => visibleTo(entry, ctx.principal)),
    (entry) => entry.prompt.name,
    options.toolsPageSize,
    params?.cursor,
  );
  return {
    kind: 'result',
    result: {
      prompts: page.items.map((entry) => entry.prompt),
      ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }),
    },
  };
}

/** `prompts/get`: a worker of the prompt's read queue renders it (and checks the arguments: -32602). */
export async function promptsGet(
  ctx: Call<OfferingReadServices>,
  params: ClientRequestParams<'prompts/get'>,
): Promise<HandlerAnswer> {
  const entry = await ctx.services.offerings.prompts.get(params.name);
  if (entry === undefined || !visibleTo(entry, ctx.principal)) {
    throw ProtocolError.invalidParams(`Unknown prompt: '${params.name}'. Call prompts/list to see the prompts.`);
  }
  const read = { method: 'prompts/get' as const, name: params.name, arguments: params.arguments ?? {} };
  return { kind: 'result', result: await runReadJob(ctx, entry.queue, read) };
}
