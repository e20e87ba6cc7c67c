/** One log call: structured fields first, then the message (pino's argument order). */
export type LogFn = (fields: Readonly<Record<string, unknown>>, message: string) => void;

/**
 * The logging the gateway needs, shaped so that a pino logger fits as is. Never pass tokens, session ids or
 * tool arguments in the fields: log digests and ids instead.
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
