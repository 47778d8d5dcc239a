/**
 * Logging without code changes: set `ROCKETMQ_TS_LOG` to `debug`, `info`, `warn` or `error` (or `1` /
 * `true` for `info`) and every client and broker created without a `logger` option writes one line
 * per record at that level or above to stderr. Unset (or `0`, `false`, `silent`), they stay silent.
 */
import { silentLogger, type Logger } from './logger.js';

const LEVELS = ['debug', 'info', 'warn', 'error'] as const;
type Level = (typeof LEVELS)[number];

function describe(obj: unknown): string {
  if (obj === undefined || obj === null) return '';
  if (obj instanceof Error) return ` ${obj.name}: ${obj.message}`;
  try {
    return ` ${JSON.stringify(obj, (_k, v: unknown) =>
      v instanceof Error ? { name: v.name, message: v.message, code: (v as { code?: unknown }).code } : v,
    )}`;
  } catch {
    return ` ${String(obj)}`;
  }
}

/** A logger writing `<ISO time> <LEVEL> [rocketmq-ts] <message> <fields as JSON>` lines to `write`. */
export function consoleLogger(
  level: Level = 'info',
  write: (line: string) => void = (line) => process.stderr.write(line),
): Logger {
  const min = LEVELS.indexOf(level);
  const at =
    (l: Level) =>
    (obj: unknown, msg?: string): void => {
      if (LEVELS.indexOf(l) < min) return;
      const text = typeof obj === 'string' && msg === undefined ? obj : (msg ?? '');
      const fields = typeof obj === 'string' && msg === undefined ? '' : describe(obj);
      write(`${new Date().toISOString()} ${l.toUpperCase()} [rocketmq-ts] ${text}${fields}\n`);
    };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

/** The logger used when none is given: from `ROCKETMQ_TS_LOG`, else silent. */
export function defaultLogger(value: string | undefined = process.env.ROCKETMQ_TS_LOG): Logger {
  const v = value?.trim().toLowerCase();
  if (v === undefined || v === '' || v === '0' || v === 'false' || v === 'silent' || v === 'off') return silentLogger;
  if (v === '1' || v === 'true' || v === 'on') return consoleLogger('info');
  return (LEVELS as readonly string[]).includes(v) ? consoleLogger(v as Level) : consoleLogger('info');
}
