/**
 * The iteration order of a Java `HashMap<String, String>`, so that a command decoded here and written
 * again lists its extFields in the order RocketMQ would (Java writes a map in bucket order, not in
 * the order it was read). A key's bucket is `(h ^ (h >>> 16)) & (capacity - 1)` with `h` its
 * `String.hashCode`; the table doubles while the size exceeds 3/4 of it; a bucket keeps insertion
 * order, and resizing preserves it.
 * @pure
 */
import { javaStringHashCode } from '../common/codec/java-string.js';

/** `keys` (distinct, in insertion order) in the order a HashMap created with `initialCapacity` iterates them. */
export function javaHashMapOrder(keys: readonly string[], initialCapacity: number): string[] {
  let capacity = initialCapacity;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const mask = capacity - 1;
  return keys
    .map((key, i) => {
      const h = javaStringHashCode(key);
      return { key, i, bucket: (h ^ (h >>> 16)) & mask };
    })
    .sort((a, b) => a.bucket - b.bucket || a.i - b.i)
    .map((e) => e.key);
}
