import { isMainThread } from 'node:worker_threads';
import { type DestinationStream, type Logger as PinoLogger, pino } from 'pino';
import { batchedStdout } from './log-destination.js';

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

/** One path of REDACTED_PATHS, by segment (`*`: any key). */
type Path = readonly string[];

const PATHS: readonly Path[] = REDACTED_PATHS.map((path) => path.split('.'));
/** The last segment of every path: only a key named so can be censored (one Set look-up per key). */
const NAMES = new Set(PATHS.map((path) => path.at(-1) as string));
const DEPTH = Math.max(...PATHS.map((path) => path.length));
const CENSOR = '[redacted]';

function matches(path: Path, keys: readonly string[]): boolean {
  return path.length === keys.length && path.every((segment, i) => segment === '*' || segment === keys[i]);
}

/**
 * `value` with every REDACTED_PATHS path censored; the same object when nothing is (most entries: one Set
 * look-up per key), otherwise copies along the censored paths (the caller's object is never changed).
 */
export function censored<T>(value: T, above: readonly string[] = []): T {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return value;
  let copy: Record<string, unknown> | undefined;
  for (const [key, item] of Object.entries(value)) {
    const keys = [...above, key];
    let next = item;
    if (NAMES.has(key) && PATHS.some((path) => matches(path, keys))) next = CENSOR;
    else if (keys.length < DEPTH) next = censored(item, keys);
    if (next !== item) {
      copy ??= { ...(value as Record<string, unknown>) };
      copy[key] = next;
    }
  }
  return (copy ?? value) as T;
}

/**
 * The process's JSON logger (stdout unless `destination` is given). Every entry carries the process's
 * name and pid; requests and jobs add their ids through child loggers. REDACTED_PATHS are censored in every
 * entry and every child's bindings by a walk of the entry's own keys (a few microseconds), not by pino's
 * `redact`, whose wildcard paths cost about 40 times the rest of an entry (each audit entry paid it).
 * Stdout gets the lines of one turn of the event loop in one write (`log-destination.ts`).
 */
export function createLogger(level: string, name: string, destination?: DestinationStream): PinoLogger {
  const options = {
    name,
    level,
    base: { pid: process.pid },
    formatters: { log: (entry: Record<string, unknown>) => censored(entry) },
  };
  const to = destination ?? (isMainThread ? batchedStdout() : undefined);
  const logger = to === undefined ? pino(options) : pino(options, to);
  // pino's bindings formatter applies to the root's only; every child (and theirs: they inherit this method)
  // has its bindings censored here, once, when it is made.
  const child = logger.child;
  logger.child = function censoredChild(this: PinoLogger, bindings, childOptions) {
    return child.call(this, censored(bindings), childOptions);
  } as typeof child;
  return logger;
}
