/** Result codes of the transition scripts (`commands/includes/codes.lua` defines the same numbers). */
export const ScriptCode = {
  Ok: 0,
  NotFound: -1,
  Terminal: -2,
  IllegalTransition: -3,
  LimitExceeded: -4,
  AlreadyExists: -5,
} as const;

export type ScriptCode = (typeof ScriptCode)[keyof typeof ScriptCode];
