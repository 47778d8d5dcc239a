/**
 * SEARCH_OFFSET_BY_TIMESTAMP as a binary search over a queue's store timestamps
 * (RocketMQ: ConsumeQueue.getOffsetInQueueByTime). LOWER: the first offset whose store time is >= ts,
 * or `max` when every message is older. UPPER: the last offset whose store time is <= ts, or `min`
 * when every message is newer. Store times are non-decreasing along a queue.
 * @pure
 */
import type { BoundaryType } from './types.js';

export async function findOffsetByTime(
  min: number,
  max: number,
  timestamp: number,
  boundary: BoundaryType,
  storeTimeAt: (queueOffset: number) => Promise<number | null> | number | null,
): Promise<number> {
  if (max <= min) return max;
  if (boundary === 'LOWER') {
    // First offset in [min, max) with time >= ts; max when none.
    let lo = min;
    let hi = max;
    while (lo < hi) {
      const mid = lo + Math.floor((hi - lo) / 2);
      const t = await storeTimeAt(mid);
      if (t === null) return 0; // RocketMQ: 0 when the data is unreadable
      if (t >= timestamp) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }
  // Last offset in [min, max) with time <= ts; min when none.
  let lo = min - 1;
  let hi = max - 1;
  while (lo < hi) {
    const mid = lo + Math.ceil((hi - lo) / 2);
    const t = await storeTimeAt(mid);
    if (t === null) return 0;
    if (t <= timestamp) lo = mid;
    else hi = mid - 1;
  }
  return lo < min ? min : lo;
}
