/**
 * A logger that writes one JSON line per entry, in pino's shape (`level` as pino's number, `time` in
 * ms, `msg`, then the entry's fields), for the CLI's stderr. Errors are written with their type,
 * message, code and stack. Entries below the chosen level are dropped.
 * @pure
 */
import type { Logger } from './logger.js';

export const LOG_LEVELS = Object.freeze(['debug', 'info', 'warn', 'error', 'silent'] as const);
export type LogLevel = (typeof LOG_LEVELS)[number];

/** pino's numbers for the levels. */
const LEVEL_VALUES: Readonly<Record<LogLevel, number>> = Object.freeze({
  debug: 20,
  info: 30,
  warn: 40,
  error: 50,
  silent: Infinity,
});

export function isLogLevel(v: string): v is LogLevel {
  return (LOG_LEVELS as readonly string[]).includes(v);
}

/** A logger writing entries at or above `level` with `write` (one line each, newline included). */
export function createLineLogger(level: LogLevel, write: (line: string) => void, now = Date.now): Logger {
  const min = LEVEL_VALUES[level];
  const entry =
    (name: Exclude<LogLevel, 'silent'>) =>
    (obj: unknown, msg?: string): void => {
      const value = LEVEL_VALUES[name];
      if (value < min) return;
      const fields = obj !== null && typeof obj === 'object' ? (obj as Record<string, unknown>) : { value: obj };
      let line: string;
      try {
        line = JSON.stringify({ level: value, time: now(), msg, ...fields }, replacer);
      } catch {
        line = JSON.stringify({ level: value, time: now(), msg, unserializable: true });
      }
      write(`${line}\n`);
    };
  return { debug: entry('debug'), info: entry('info'), warn: entry('warn'), error: entry('error') };
}

function replacer(_key: string, v: unknown): unknown {
  if (v instanceof Error) {
    const e = v as Error & { code?: unknown };
    return { type: e.name, message: e.message, code: e.code, stack: e.stack };
  }
  if (typeof v === 'bigint') return v.toString();
  return v;
}
