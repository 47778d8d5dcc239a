/**
 * Memory for pull bodies, reused. A pull body copies the records of one pull into one buffer; a new
 * buffer of tens of KiB per pull is fresh memory the kernel has to map page by page, which costs far
 * more than the copy itself. Bodies up to `MAX_POOLED_BYTES` come from fixed slots (size classes of
 * powers of two) that the writer hands back once the socket has taken the bytes.
 *
 * A body nobody hands back is simply garbage collected: only a transport that knows nothing else holds
 * the body (the remoting listener, after the write completed) may call `releasePullBody`. Handing back
 * anything else (a buffer not from here, a slot already back) is ignored.
 * @pure
 */

const MIN_CLASS_BYTES = 64 * 1024;
/** Larger bodies are allocated as they come. */
export const MAX_POOLED_BYTES = 1024 * 1024;
/** Free slots kept, all classes together, bytes. */
const MAX_FREE_BYTES = 8 * 1024 * 1024;

/** Slots this pool made, and whether each is handed out now. */
const handedOut = new WeakMap<ArrayBufferLike, boolean>();
/** Free slots by class (index 0: 64 KiB, 1: 128 KiB, ...). */
const free: ArrayBuffer[][] = [];
let freeBytes = 0;

function classOf(size: number): number {
  let c = 0;
  for (let bytes = MIN_CLASS_BYTES; bytes < size; bytes *= 2) c++;
  return c;
}

/** A buffer of `size` bytes (contents undefined) for a pull body. */
export function acquirePullBody(size: number): Buffer {
  if (size > MAX_POOLED_BYTES || size <= 0) return Buffer.allocUnsafe(size);
  const c = classOf(size);
  let slot = free[c]?.pop();
  if (slot) freeBytes -= slot.byteLength;
  else slot = new ArrayBuffer(MIN_CLASS_BYTES * 2 ** c);
  handedOut.set(slot, true);
  return Buffer.from(slot, 0, size);
}

/** Hands a pull body back once nothing reads it any more (its bytes were written out). */
export function releasePullBody(body: Uint8Array): void {
  const slot = body.buffer;
  if (handedOut.get(slot) !== true || body.byteOffset !== 0) return;
  handedOut.set(slot, false);
  if (freeBytes + slot.byteLength > MAX_FREE_BYTES) return;
  const c = classOf(slot.byteLength);
  (free[c] ??= []).push(slot as ArrayBuffer);
  freeBytes += slot.byteLength;
}
