import { visibleTo } from '@taskgate/core';
import { type ClientRequestParams, ProtocolError } from '@taskgate/protocol';
import type { Call, HandlerAnswer } from './context.js';
import type { OfferingReadServices } from './prompts.js';
import { runReadJob } from './read-job.js';

/**
 * `completion/complete`: suggestions for a prompt argument (`ref/prompt`) or a template variable
 * (`ref/resource`, by its URI template). An argument without a completer answers no values at once; one
 * with a completer is asked on a worker of the offering's read queue.
 */
export async function completionComplete(
  ctx: Call<OfferingReadServices>,
  params: ClientRequestParams<'completion/complete'>,
): Promise<HandlerAnswer> {
  const { ref, argument, context } = params;
  const { offerings } = ctx.services;
  const entry =
    ref.type === 'ref/prompt' ? await offerings.prompts.get(ref.name) : await offerings.templates.get(ref.uri);
  if (entry === undefined || !visibleTo(entry, ctx.principal)) {
    throw ProtocolError.invalidParams(
      ref.type === 'ref/prompt'
        ? `Unknown prompt: '${ref.name}'. Call prompts/list to see the prompts.`
        : `Unknown resource template: '${ref.uri}'. Call resources/templates/list to see the templates.`,
    );
  }
  if (!entry.completable.includes(argument.name)) {
    return { kind: 'result', result: { completion: { values: [] } } };
  }
  const read = {
    method: 'completion/complete' as const,
    ref,
    argument,
    ...(context?.arguments !== undefined && { context: { arguments: context.arguments } }),
  };
  return { kind: 'result', result: await runReadJob(ctx, entry.queue, read) };
}
