/** Result codes of the transition scripts (`commands/includes/codes.lua` defines the same numbers). */
export const ScriptCode = {
  Ok: 0,
  NotFound: -1,
  Terminal: -2,
  IllegalTransition: -3,
  LimitExceeded: -4,
  AlreadyExists: -5,
  /** The connection no longer holds the SSE stream (it was resumed elsewhere). */
  Fenced: -6,
  /** Another stream carries the task's outbox (or, for the GET stream, some stream does). */
  NotCarrier: -7,
  /** The outbox entry was relayed already. */
  Stale: -8,
} as const;

export type ScriptCode = (typeof ScriptCode)[keyof typeof ScriptCode];
