import { Keys, type TaskStore } from '@taskgate/core';
import type { Call, HandlerAnswer } from './context.js';

/** `tasks/list` (LST-1, LST-2): one page of the caller's tasks with a signed cursor. */
export async function tasksList(
  ctx: Call<{ readonly tasks: TaskStore }>,
  params: { readonly cursor?: string | undefined } | undefined,
): Promise<HandlerAnswer> {
  const page = await ctx.services.tasks.list(ctx.owner, params?.cursor);
  ctx.logger.info(
    {
      audit: 'tasks.listed',
      owner: Keys.ownerId(ctx.owner),
      count: page.tasks.length,
      more: page.nextCursor !== undefined,
    },
    'tasks listed',
  );
  return {
    kind: 'result',
    result: { tasks: page.tasks, ...(page.nextCursor !== undefined && { nextCursor: page.nextCursor }) },
  };
}
