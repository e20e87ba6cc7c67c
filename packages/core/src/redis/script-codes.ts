/**
 * Reply codes of every script (`commands/includes/codes.lua` defines the same numbers). Each code has one
 * meaning in every script; `script-replies.ts` decodes them into each script's union.
 */
export const ScriptCode = {
  Ok: 0,
  NotFound: -1,
  Terminal: -2,
  IllegalTransition: -3,
  LimitExceeded: -4,
  /** A task with this id exists (createTask only). */
  AlreadyExists: -5,
  /** The connection no longer holds the SSE stream (it was resumed elsewhere). */
  Fenced: -6,
  /** Another stream carries the task's outbox (or, for the GET stream, some stream does). */
  NotCarrier: -7,
  /** The outbox entry was relayed already. */
  Stale: -8,
  /** A lease is held by another holder, or by none where the caller's was required. */
  NotHeld: -9,
  /** The input request was answered already (the first answer wins). */
  Answered: -10,
  /** The session keys passed in KEYS are not the ones the task's record names (re-read them, run again). */
  WrongSessionKeys: -11,
} as const;

export type ScriptCode = (typeof ScriptCode)[keyof typeof ScriptCode];
