/**
 * The iteration order of a Java `HashMap<String, String>`, so that a command decoded here and written
 * again lists its extFields in the order RocketMQ would (Java writes a map in bucket order, not in
 * the order it was read). A key's bucket is `(h ^ (h >>> 16)) & (capacity - 1)` with `h` its
 * `String.hashCode`; the table doubles while the size exceeds 3/4 of it; a bucket keeps insertion
 * order, and resizing preserves it.
 * @pure
 */
import { javaStringHashCode } from '../common/codec/java-string.js';

/**
 * `(h ^ (h >>> 16))` of the keys seen lately: every command of a kind carries the same header field
 * names, so each is hashed once rather than once per command. Bounded: emptied when full.
 */
const spreadHashes = new Map<string, number>();
const MAX_CACHED_KEYS = 4096;

function spreadHash(key: string): number {
  let h = spreadHashes.get(key);
  if (h === undefined) {
    const j = javaStringHashCode(key);
    h = j ^ (j >>> 16);
    if (spreadHashes.size >= MAX_CACHED_KEYS) spreadHashes.clear();
    spreadHashes.set(key, h);
  }
  return h;
}

/** `keys` (distinct, in insertion order) in the order a HashMap created with `initialCapacity` iterates them. */
export function javaHashMapOrder(keys: readonly string[], initialCapacity: number): string[] {
  let capacity = initialCapacity;
  while (keys.length > capacity * 0.75) capacity *= 2;
  const mask = capacity - 1;
  const out: string[] = [];
  const buckets: number[] = [];
  // A stable insertion sort by bucket: headers have a dozen keys, so no comparator objects are made.
  for (const key of keys) {
    const bucket = spreadHash(key) & mask;
    let j = out.length;
    out.push(key);
    buckets.push(bucket);
    while (j > 0 && (buckets[j - 1] as number) > bucket) {
      out[j] = out[j - 1] as string;
      buckets[j] = buckets[j - 1] as number;
      j--;
    }
    out[j] = key;
    buckets[j] = bucket;
  }
  return out;
}
