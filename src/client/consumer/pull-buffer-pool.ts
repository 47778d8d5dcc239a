/**
 * The memory pulled answers wait in until their messages are handed out. Each answer's records are
 * copied out of the transport's frame into a Buffer taken from here and given back once the last of
 * them has been decoded for the listener (every message handed out is a copy of its own).
 *
 * Why a pool: behind a slow listener an answer waits seconds, long enough for its Buffer to reach V8's
 * old generation; a plain Buffer per answer would then be freed only by a full collection, which V8
 * starts only after tens of MiB of such external memory have piled up. Recycled Buffers keep the
 * external memory flat instead. Sizes are rounded up to classes a quarter of a power of two apart (at
 * most 25% unused), and at most `maxIdleBytes` of given-back Buffers are kept; beyond that they are
 * left to the garbage collector.
 * @pure
 */

/** The smallest class: smaller answers are rounded up to it. */
const MIN_CLASS = 4096;

/** The class an answer of `n` bytes is held in (`n` rounded up to a quarter of a power of two). */
export function sizeClassOf(n: number): number {
  if (n <= MIN_CLASS) return MIN_CLASS;
  const step = 2 ** (31 - Math.clz32(n - 1) - 2);
  return Math.ceil(n / step) * step;
}

export class PullBufferPool {
  readonly #free = new Map<number, Buffer[]>();
  #idleBytes = 0;

  /** @param maxIdleBytes the most given-back bytes kept for reuse. */
  constructor(readonly maxIdleBytes: number) {}

  /** Bytes held for reuse now. */
  get idleBytes(): number {
    return this.#idleBytes;
  }

  /** A Buffer of at least `n` bytes (its whole class); its contents are whatever was there before. */
  acquire(n: number): Buffer {
    const size = sizeClassOf(n);
    const b = this.#free.get(size)?.pop();
    if (b === undefined) return Buffer.allocUnsafeSlow(size);
    this.#idleBytes -= size;
    return b;
  }

  /** Gives back a Buffer from `acquire`; nothing may read or write it afterwards. */
  release(b: Buffer): void {
    const size = b.length;
    if (size !== sizeClassOf(size) || this.#idleBytes + size > this.maxIdleBytes) return;
    let list = this.#free.get(size);
    if (list === undefined) this.#free.set(size, (list = []));
    list.push(b);
    this.#idleBytes += size;
  }
}

/** The process's pool: at most 8 MiB idle (about 200 answers of 32 one-KiB messages). */
export const pullBufferPool = new PullBufferPool(8 * 1024 * 1024);
