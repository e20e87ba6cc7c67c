import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';

/**
 * Paths censored wherever they appear, as a second line of defence: gateways log a fixed set of fields and
 * never headers, tokens or tool arguments, but a careless log call must not leak them either.
 */
export const REDACTED_PATHS: readonly string[] = [
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'headers.cookie',
  '*.headers.cookie',
  'token',
  '*.token',
  'accessToken',
  '*.accessToken',
  'access_token',
  '*.access_token',
  'tokens',
  'arguments',
  '*.arguments',
  'args',
  '*.args',
  'params.arguments',
  '*.params.arguments',
  'cursorSecret',
  '*.cursorSecret',
  'requestStateSecret',
  '*.requestStateSecret',
];

/**
 * The process's JSON logger (stdout unless `destination` is given). Every entry carries the process's
 * name and pid; requests and jobs add their ids through child loggers.
 */
export function createLogger(level: string, name: string, destination?: DestinationStream): PinoLogger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    redact: { paths: [...REDACTED_PATHS], censor: '[redacted]' },
  };
  return destination === undefined ? pino(options) : pino(options, destination);
}
