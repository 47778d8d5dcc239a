/**
 * Memory for pull bodies, reused. A pull body copies the records of one pull into one buffer; a new
 * buffer of tens of KiB per pull is fresh memory the kernel has to map page by page, which costs far
 * more than the copy itself. Bodies up to `MAX_POOLED_BYTES` come from fixed slots (size classes of
 * powers of two) that the writer hands back once the socket has taken the bytes. The remoting listener
 * also gathers large request frames into these slots while they arrive, and hands a slot back once its
 * request is answered.
 *
 * A body nobody hands back is simply garbage collected: only a holder that knows nothing else reads the
 * body (the remoting listener, after the write completed or the request was answered) may call
 * `releasePullBody`. Handing back anything else (a buffer not from here, a slot already back) is ignored.
 *
 * Slots up to `MAX_FREE_BYTES` in all are plain ArrayBuffers, kept for good: a steady stream of pulls
 * uses only these. Slots made past that amount (a flood of pulls, answers not read) are resizable
 * ArrayBuffers, pages of the engine rather than of malloc's heap: the pool gives them back by shrinking
 * them to nothing once they stayed free for a whole `TRIM_EVERY_MS`, so during a flood they are reused
 * (fresh pages cost several times a reused slot) and after it their memory goes back to the OS at once,
 * instead of waiting for a collection and then staying in the C allocator's free lists. Plain slots are
 * not resizable because Buffers over a resizable ArrayBuffer cost the broker measurably more per pull.
 * @pure
 */
import { type ResizableArrayBuffer, resizableArrayBuffer } from '../common/resizable-buffer.js';

const MIN_CLASS_BYTES = 64 * 1024;
/** Larger bodies are allocated as they come, and shrunk to nothing when handed back. */
export const MAX_POOLED_BYTES = 1024 * 1024;
/** Plain slots made (kept for good), all classes together, bytes at most. */
const MAX_FREE_BYTES = 8 * 1024 * 1024;
/** How long free slots past MAX_FREE_BYTES are kept unused before they are given back, ms. */
export const TRIM_EVERY_MS = 1000;

/** Slots this pool made, and whether each is handed out now. */
const handedOut = new WeakMap<ArrayBufferLike, boolean>();
/** Free slots by class (index 0: 64 KiB, 1: 128 KiB, ...). */
const free: ResizableArrayBuffer[][] = [];
let freeBytes = 0;
/** Bytes of the plain slots made so far. */
let plainBytes = 0;
/** The fewest free bytes since the last trim: that many were not needed in the meantime. */
let lowWater = 0;
let trimTimer: ReturnType<typeof setTimeout> | undefined;

function classOf(size: number): number {
  let c = 0;
  for (let bytes = MIN_CLASS_BYTES; bytes < size; bytes *= 2) c++;
  return c;
}

/** A new pooled slot: plain while the plain slots stay within MAX_FREE_BYTES, else resizable. */
function newSlot(bytes: number): ResizableArrayBuffer {
  if (plainBytes + bytes > MAX_FREE_BYTES) return resizableArrayBuffer(bytes);
  plainBytes += bytes;
  return new ArrayBuffer(bytes) as ResizableArrayBuffer;
}

/** A buffer of `size` bytes (contents undefined) for a pull body. */
export function acquirePullBody(size: number): Buffer {
  if (size <= 0) return Buffer.allocUnsafe(0);
  if (size > MAX_POOLED_BYTES) {
    const own = resizableArrayBuffer(size);
    handedOut.set(own, true);
    return Buffer.from(own, 0, size);
  }
  const c = classOf(size);
  let slot = free[c]?.pop();
  if (slot) {
    freeBytes -= slot.byteLength;
    lowWater = Math.min(lowWater, freeBytes);
  } else slot = newSlot(MIN_CLASS_BYTES * 2 ** c);
  handedOut.set(slot, true);
  return Buffer.from(slot, 0, size);
}

/** Hands a pull body back once nothing reads it any more (its bytes were written out). */
export function releasePullBody(body: Uint8Array): void {
  const slot = body.buffer as ResizableArrayBuffer;
  if (handedOut.get(slot) !== true || body.byteOffset !== 0) return;
  handedOut.set(slot, false);
  if (slot.byteLength > MAX_POOLED_BYTES) {
    slot.resize(0);
    return;
  }
  const c = classOf(slot.byteLength);
  (free[c] ??= []).push(slot);
  freeBytes += slot.byteLength;
  if (freeBytes > MAX_FREE_BYTES && trimTimer === undefined) {
    lowWater = freeBytes;
    trimTimer = setTimeout(trim, TRIM_EVERY_MS);
    trimTimer.unref?.();
  }
}

/**
 * Gives back the free resizable slots past MAX_FREE_BYTES that were not needed since the last trim,
 * largest first (the plain slots, MAX_FREE_BYTES at most, stay).
 */
function trim(): void {
  trimTimer = undefined;
  let excess = Math.min(lowWater, freeBytes) - MAX_FREE_BYTES;
  for (let c = free.length - 1; c >= 0 && excess > 0; c--) {
    const slots = free[c] ?? [];
    for (let i = slots.length - 1; i >= 0 && excess > 0; i--) {
      const slot = slots[i] as ResizableArrayBuffer;
      if (!slot.resizable) continue;
      slots.splice(i, 1);
      freeBytes -= slot.byteLength;
      excess -= slot.byteLength;
      slot.resize(0);
    }
  }
  if (freeBytes > MAX_FREE_BYTES) {
    lowWater = freeBytes;
    trimTimer = setTimeout(trim, TRIM_EVERY_MS);
    trimTimer.unref?.();
  }
}
