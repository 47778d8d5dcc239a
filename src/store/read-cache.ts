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
  /** `high` when the ring was allocated: the ring's first pass holds offsets from here on. */
  private firstPassFrom = 0;
  /** Ring bytes of the offsets below this were touched once (written or pre-faulted). */
  private touchedEnd = 0;

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
    const ring = this.ring ?? this.allocate();
    const at = offset % cap;
    const first = Math.min(buf.length, cap - at);
    if (first === buf.length) ring.set(buf, at);
    else {
      ring.set(buf.subarray(0, first), at);
      ring.set(buf.subarray(first), 0);
    }
    this.high = offset + buf.length;
  }

  private allocate(): Buffer {
    const ring = Buffer.allocUnsafeSlow(this.capacityBytes);
    this.ring = ring;
    this.firstPassFrom = this.touchedEnd = this.high;
    return ring;
  }

  /**
   * Bytes of the ring still to touch so that the next `leadBytes` appended land on memory touched
   * before. The ring is allocated untouched: the first write to each of its pages is a page fault (the
   * kernel maps and zeroes the page), which costs more than copying the bytes of a message.
   */
  untouchedAhead(leadBytes: number): number {
    if (this.capacityBytes <= 0) return 0;
    // Before allocation, the first pass starts where the next append goes.
    const passFrom = this.ring === null ? this.high : this.firstPassFrom;
    const from = this.ring === null ? this.high : Math.max(this.touchedEnd, this.high);
    return Math.max(0, Math.min(this.high + leadBytes, passFrom + this.capacityBytes) - from);
  }

  /**
   * Touches (zeroes) up to `maxBytes` of the ring where the next `leadBytes` appended will go, on the
   * ring's first pass only, so that those appends find their pages already mapped. Only ring bytes
   * that hold nothing cached are touched. Returns the bytes touched (0 when there was nothing to do).
   */
  prefault(maxBytes: number, leadBytes: number): number {
    const n = Math.min(maxBytes, this.untouchedAhead(leadBytes));
    if (n <= 0) return 0;
    const ring = this.ring ?? this.allocate();
    const cap = this.capacityBytes;
    const from = Math.max(this.touchedEnd, this.high);
    const at = from % cap;
    const first = Math.min(n, cap - at);
    ring.fill(0, at, at + first);
    if (first < n) ring.fill(0, 0, n - first);
    this.touchedEnd = from + n;
    return n;
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
    this.low = this.high = this.firstPassFrom = this.touchedEnd = 0;
  }
}
