import { type Logger as PinoLogger, pino } from 'pino';

/**
 * The process's JSON logger. Request headers never reach it (gateways log a fixed set of fields), and these
 * paths are redacted wherever they appear, as a second line of defence.
 */
export function createLogger(level: string, name: string): PinoLogger {
  return pino({
    name,
    level,
    base: { pid: process.pid },
    redact: {
      paths: [
        'authorization',
        '*.authorization',
        'headers.authorization',
        '*.headers.authorization',
        'token',
        '*.token',
        'arguments',
        '*.arguments',
        'cursorSecret',
      ],
      censor: '[redacted]',
    },
  });
}
