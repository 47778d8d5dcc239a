/**
 * The received chunks of a byte stream that has not been cut into frames yet, kept as they came:
 * a frame's bytes are read from them once, when the frame is complete, rather than each chunk being
 * copied into a growing buffer. Shared by the client's FrameReader and the broker's FrameIntake so
 * that the arithmetic across chunk boundaries exists once.
 * @pure
 */
export class ChunkQueue {
  #chunks: Buffer[] = [];
  #length = 0;

  /** Bytes queued. */
  get length(): number {
    return this.#length;
  }

  /** Queues `chunk` as it is (not copied: the caller must not reuse its memory). An empty chunk is not kept. */
  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#length += chunk.length;
  }

  /** The big-endian int32 in the first 4 queued bytes, which may span chunks; the caller checks `length >= 4`. */
  peekInt32(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.allocUnsafe(4);
    let filled = 0;
    for (const c of this.#chunks) {
      filled += c.copy(head, filled, 0, Math.min(c.length, 4 - filled));
      if (filled === 4) break;
    }
    return head.readInt32BE(0);
  }

  /**
   * Removes the first `n` queued bytes (the caller checks `length >= n`) and returns them: a view of
   * the chunk when they lie in one, else one copy joining them.
   */
  take(n: number): Buffer {
    this.#length -= n;
    const first = this.#chunks[0] as Buffer;
    if (first.length >= n) {
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0] as Buffer;
      const used = Math.min(c.length, n - filled);
      c.copy(out, filled, 0, used);
      filled += used;
      if (used === c.length) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(used);
    }
    return out;
  }

  /** Copies every queued byte into `target` from `at` (the caller checks it fits) and empties the queue. */
  drainInto(target: Uint8Array, at: number): number {
    let filled = at;
    for (const c of this.#chunks) {
      target.set(c, filled);
      filled += c.length;
    }
    this.clear();
    return filled - at;
  }

  /** Drops every queued byte. */
  clear(): void {
    this.#chunks = [];
    this.#length = 0;
  }
}
