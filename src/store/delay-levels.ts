/**
 * RocketMQ's delay levels: `messageDelayLevel = "1s 5s 10s 30s 1m ..."`, parsed by splitting on spaces,
 * the unit is the last char (s, m, h, d), level = index + 1 (DefaultMessageStore.parseDelayLevel).
 * @pure
 */
import { InvalidArgumentError } from '../common/errors.js';

export const DEFAULT_MESSAGE_DELAY_LEVEL = '1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h';

const UNIT_MS: Readonly<Record<string, number>> = Object.freeze({
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
});

/**
 * The delay of each level in ms (index 0 = level 1). RocketMQ's units are s, m, h and d; `ms` is our
 * documented extension so that tests can use a fast table (e.g. `"100ms 200ms 1s"`). Throws
 * InvalidArgumentError naming `field` and the bad item when the string is malformed.
 */
export function parseDelayLevels(spec: string, field = 'messageDelayLevel'): number[] {
  const items = spec.split(' ').filter((s) => s.length > 0);
  if (items.length === 0) throw new InvalidArgumentError(field, 'no delay level given');
  return items.map((item) => {
    const m = /^(\d+)(ms|s|m|h|d)$/.exec(item);
    const value = m ? Number(m[1]) * (UNIT_MS[m[2] ?? ''] ?? Number.NaN) : Number.NaN;
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new InvalidArgumentError(field, `'${item}' is not a delay like 100ms, 10s, 5m, 2h or 1d`);
    }
    return value;
  });
}

/**
 * The delivery time of a delayed message, stored as its consume-queue tags code.
 * RocketMQ: the level is clamped to the max level; an unknown level (< 1) falls back to +1000 ms
 * (CommitLog.java:572-587, DefaultMessageStore.computeDeliverTimestamp).
 */
export function computeDeliverTimestamp(levelsMs: readonly number[], level: number, storeTimestamp: number): number {
  const clamped = Math.min(level, levelsMs.length);
  const delayMs = clamped >= 1 ? levelsMs[clamped - 1] : undefined;
  return storeTimestamp + (delayMs ?? 1000);
}
