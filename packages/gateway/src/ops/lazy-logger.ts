import type { Logger } from '@taskgate/core';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** pino's level check, when the logger has one (the `Logger` interface does not require it). */
type LevelAware = Logger & { isLevelEnabled?: (level: string) => boolean };

/**
 * A child logger that never makes a real child: it writes each entry through its root with its bindings (and
 * its ancestors', in order) put before the entry's fields. Every request gets a child logger with its request
 * id, and most requests never log (a blocked tasks/result stream may wait for hours); those that do log once
 * or twice (a retrieved result's audit entry). A pino child is a whole logger object, whose bindings are
 * redacted and serialized when it is made: making two or three of them for one entry cost more than the entry,
 * which thousands of tasks/result waiters woken together each wrote. The line is what the real child writes.
 */
export class LazyLogger implements Logger {
  readonly #root: LevelAware;
  readonly #parent: LazyLogger | undefined;
  readonly #bindings: Readonly<Record<string, unknown>>;

  private constructor(root: LevelAware, parent: LazyLogger | undefined, bindings: Readonly<Record<string, unknown>>) {
    this.#root = root;
    this.#parent = parent;
    this.#bindings = bindings;
  }

  debug(fields: Readonly<Record<string, unknown>>, message: string): void {
    this.#log('debug', fields, message);
  }

  info(fields: Readonly<Record<string, unknown>>, message: string): void {
    this.#log('info', fields, message);
  }

  warn(fields: Readonly<Record<string, unknown>>, message: string): void {
    this.#log('warn', fields, message);
  }

  error(fields: Readonly<Record<string, unknown>>, message: string): void {
    this.#log('error', fields, message);
  }

  child(bindings: Readonly<Record<string, unknown>>): Logger {
    return new LazyLogger(this.#root, this, bindings);
  }

  /** The bindings of this logger and its ancestors, oldest first, then `fields`: the entry's fields in order. */
  #fields(fields: Readonly<Record<string, unknown>>): Record<string, unknown> {
    const chain: Readonly<Record<string, unknown>>[] = [];
    for (let logger: LazyLogger | undefined = this; logger !== undefined; logger = logger.#parent) {
      chain.push(logger.#bindings);
    }
    const merged: Record<string, unknown> = {};
    for (let i = chain.length - 1; i >= 0; i--) Object.assign(merged, chain[i]);
    return Object.assign(merged, fields);
  }

  #log(level: Level, fields: Readonly<Record<string, unknown>>, message: string): void {
    // Children share their root's level: a dropped entry costs nothing more.
    if (this.#root.isLevelEnabled?.(level) === false) return;
    this.#root[level](this.#fields(fields), message);
  }

  /**
   * `root` itself for its own entries, with children that are lazy (and so are theirs). Loggers whose level
   * changes per child after creation are not supported (pino's `level` setter on a child).
   */
  static wrap(root: Logger): Logger {
    const aware = root as LevelAware;
    return {
      debug: (fields, message) => root.debug(fields, message),
      info: (fields, message) => root.info(fields, message),
      warn: (fields, message) => root.warn(fields, message),
      error: (fields, message) => root.error(fields, message),
      child: (bindings) => new LazyLogger(aware, undefined, bindings),
    };
  }
}
