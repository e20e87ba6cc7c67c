import type { Logger } from '@taskgate/core';

type Level = 'debug' | 'info' | 'warn' | 'error';

/** pino's level check, when the logger has one (the `Logger` interface does not require it). */
type LevelAware = Logger & { isLevelEnabled?: (level: string) => boolean };

/**
 * A child logger that creates the real child (`parent.child(bindings)`) only when it first logs something
 * its level lets through. Every request gets a child logger with its request id, and most requests never
 * log (a blocked tasks/result stream may wait for hours): a pino child is a whole logger object, this is
 * three fields. The output is exactly what the real child writes.
 */
export class LazyLogger implements Logger {
  readonly #root: LevelAware;
  readonly #parent: Logger;
  readonly #bindings: Readonly<Record<string, unknown>>;
  #logger: Logger | undefined;

  private constructor(root: LevelAware, parent: Logger, bindings: Readonly<Record<string, unknown>>) {
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

  /** The real child, created now if need be (and its lazy ancestors with it). */
  #real(): Logger {
    this.#logger ??=
      this.#parent instanceof LazyLogger
        ? this.#parent.#real().child(this.#bindings)
        : this.#parent.child(this.#bindings);
    return this.#logger;
  }

  #log(level: Level, fields: Readonly<Record<string, unknown>>, message: string): void {
    // Children share their root's level: a dropped entry creates no child.
    if (this.#logger === undefined && this.#root.isLevelEnabled?.(level) === false) return;
    this.#real()[level](fields, message);
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
      child: (bindings) => new LazyLogger(aware, root, bindings),
    };
  }
}
