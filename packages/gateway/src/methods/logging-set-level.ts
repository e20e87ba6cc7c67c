import type { SessionStore } from '@taskgate/core';
import type { LoggingLevel } from '@taskgate/protocol';
import type { Call, HandlerAnswer } from './context.js';

/** `logging/setLevel`: the session's log level, which its GET stream and task streams render messages at. */
export async function loggingSetLevel(
  ctx: Call<{ readonly sessions: SessionStore }>,
  params: { readonly level: LoggingLevel },
): Promise<HandlerAnswer> {
  await ctx.services.sessions.setLogLevel(ctx.session.sessionId, params.level);
  return { kind: 'result', result: {} };
}
