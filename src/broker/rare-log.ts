/**
 * Warnings a flood would repeat thousands of times a second (refused connections, closed attackers):
 * each kind is logged at most once per interval, so the log says what happens without becoming the
 * attack's amplifier. The counters that go with them live where they are kept.
 */
import type { Logger } from '../common/logger.js';

const DEFAULT_EVERY_MS = 10_000;

export class RareLog {
  readonly #last = new Map<string, number>();

  constructor(
    private readonly logger: Logger,
    private readonly everyMs = DEFAULT_EVERY_MS,
  ) {}

  /** Logs `message` at warn unless a warning of this `kind` went out less than the interval ago. */
  warn(kind: string, fields: Record<string, unknown>, message: string): void {
    const now = Date.now();
    if (now - (this.#last.get(kind) ?? -Infinity) < this.everyMs) return;
    this.#last.set(kind, now);
    this.logger.warn(fields, message);
  }
}
