/** One log call: structured fields first, then the message (pino's argument order). */
export type LogFn = (fields: Readonly<Record<string, unknown>>, message: string) => void;

/**
 * The logging gateways and workers need, shaped so that a pino logger fits as is. Never pass tokens, session
 * ids or tool arguments in the fields: log digests and ids instead (tool arguments may hold personal data).
 */
export interface Logger {
  readonly debug: LogFn;
  readonly info: LogFn;
  readonly warn: LogFn;
  readonly error: LogFn;
  /** A logger that adds `bindings` to every entry (a request id, a task id). */
  child(bindings: Readonly<Record<string, unknown>>): Logger;
}

const ignore: LogFn = () => {};

/** The default logger: drops everything. */
export const noopLogger: Logger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => noopLogger,
};

/** The message of anything thrown, for logs and status messages (never a stack, never the object itself). */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}
