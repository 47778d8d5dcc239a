/**
 * A pino-shaped logger: any object with these four methods (pino, console-like wrappers, test spies).
 * Library code logs only through an injected logger, silent by default.
 * @pure
 */
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
}

const noop = (): void => {};

/** The default logger: says nothing. */
export const silentLogger: Logger = Object.freeze({ debug: noop, info: noop, warn: noop, error: noop });
