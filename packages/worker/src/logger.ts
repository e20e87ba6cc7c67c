/** One log method: structured fields first, then the message (the argument order pino uses). */
export type LogMethod = (fields: Record<string, unknown>, message: string) => void;

/**
 * The little of a logger the worker needs; a pino logger fits it. Tool arguments are never logged at info
 * or above (they may hold personal data), and nothing here ever logs tokens.
 */
export interface Logger {
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  /** A logger that adds `bindings` to every line. */
  child(bindings: Record<string, unknown>): Logger;
}

const ignore: LogMethod = () => {};

/** Discards everything: the default when the caller passes no logger. */
export const noopLogger: Logger = {
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  child: () => noopLogger,
};

/** The message of anything thrown, for logs and status messages. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return typeof error === 'string' ? error : (JSON.stringify(error) ?? String(error));
}
