/**
 * The commit log's read cache: a ring of the most recently written bytes, addressed by commit-log
 * offset (ring position = offset % capacity). One buffer, allocated once, so caching costs a copy and
 * no garbage; a read returns a copy, because the ring is overwritten as the log grows.
 * Holds [max(low, high - capacity), high): the bytes below were overwritten or never cached.
 * @pure
 */

export class ReadCache {
  private ring: Buffer | null = null;
  /** Offset just past the last cached byte. */
  private high = 0;
  /** Nothing below this offset is cached (set at start, after evictions and oversized records). */
  private low = 0;

  constructor(private readonly capacityBytes: number) {}

  /** Lowest offset still readable from the cache. */
  get lowestOffset(): number {
    return Math.max(this.low, this.high - this.capacityBytes);
  }

  /** Caches the bytes of `[offset, offset + buf.length)`; offsets only grow (gaps are fillers). */
  add(offset: number, buf: Buffer): void {
    const cap = this.capacityBytes;
    if (cap <= 0) return;
    if (offset < this.high) {
      // Never expected (the log only grows); drop everything rather than serve stale bytes.
      this.low = this.high = offset + buf.length;
      return;
    }
    if (buf.length > cap) {
      this.low = this.high = offset + buf.length;
      return;
    }
    this.ring ??= Buffer.allocUnsafeSlow(cap);
    const at = offset % cap;
    const first = Math.min(buf.length, cap - at);
    if (first === buf.length) this.ring.set(buf, at);
    else {
      this.ring.set(buf.subarray(0, first), at);
      this.ring.set(buf.subarray(first), 0);
    }
    this.high = offset + buf.length;
  }

  /** A copy of `[offset, offset + size)` when all of it is cached, else undefined. */
  get(offset: number, size: number): Buffer | undefined {
    const ring = this.ring;
    if (!ring || size <= 0 || offset < this.lowestOffset || offset + size > this.high) return undefined;
    const cap = this.capacityBytes;
    const at = offset % cap;
    const out = Buffer.allocUnsafe(size);
    const first = Math.min(size, cap - at);
    out.set(ring.subarray(at, at + first), 0);
    if (first < size) out.set(ring.subarray(0, size - first), first);
    return out;
  }

  /**
   * A view of `[offset, offset + size)` in the ring (no copy), valid only until the next `add`; undefined
   * when not cached or when the range wraps around the ring's end.
   */
  view(offset: number, size: number): Buffer | undefined {
    const ring = this.ring;
    if (!ring || size <= 0 || offset < this.lowestOffset || offset + size > this.high) return undefined;
    const at = offset % this.capacityBytes;
    return at + size <= this.capacityBytes ? ring.subarray(at, at + size) : undefined;
  }

  /** True when `[offset, offset + size)` is cached. */
  has(offset: number, size: number): boolean {
    return this.ring !== null && size > 0 && offset >= this.lowestOffset && offset + size <= this.high;
  }

  /** Forgets every byte below `offset` (its segment was deleted). */
  evictBelow(offset: number): void {
    this.low = Math.max(this.low, offset);
  }

  /** Sets where caching starts (after recovery: the end of the recovered log). */
  startAt(offset: number): void {
    this.low = this.high = offset;
  }

  clear(): void {
    this.ring = null;
    this.low = this.high = 0;
  }
}
