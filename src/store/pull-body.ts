/**
 * How one pull reads its records and hands them out: how far one read of the commit log reaches (the
 * stretch the pull's consume-queue units cover), and the pull body: the records back to back in one
 * buffer, sent as the pull response's body.
 */
import type { ReadWindow } from './commit-log-reads.js';
import { CQ_UNIT_SIZE } from './layout.js';
import { acquirePullBody } from './pull-body-pool.js';

/** Bytes read at once when a pull misses the read cache (RocketMQ's on-disk cap per pull is 64 KiB). */
export const READ_AHEAD_BYTES = 64 * 1024;
/**
 * The longest stretch of the log one read covers to serve the records of one pull. Records of a queue
 * whose messages were sent one by one lie between those of the other queues (each send picks the next
 * queue), so a 32-message pull of 1 KiB messages spans about 300 KiB of log with 8 queues: one read of
 * the stretch costs far less than one read per 64 KiB of it.
 */
const PULL_SPAN_BYTES = 512 * 1024;

/** The bytes of `[offset, offset + size)` in the read window, or undefined when it does not hold them all. */
export function windowView(window: ReadWindow, offset: number, size: number): Buffer | undefined {
  const buf = window.buf;
  if (!buf || offset < window.start || offset + size > window.start + buf.length) return undefined;
  return buf.subarray(offset - window.start, offset - window.start + size);
}

/** The commit-log offset unit `i` of `units` names. */
export function unitOffset(units: Buffer, i: number): number {
  return units.readUInt32BE(i * CQ_UNIT_SIZE) * 0x1_0000_0000 + units.readUInt32BE(i * CQ_UNIT_SIZE + 4);
}

/**
 * Where the records named by the first `maxMsgNums` units end, counting only those that start at `from`
 * or later and end within `PULL_SPAN_BYTES` of it: the extent one read should cover for a pull. 0 for
 * no such unit.
 */
export function unitsSpanEnd(units: Buffer, maxMsgNums: number, from: number): number {
  const count = Math.min(Math.floor(units.length / CQ_UNIT_SIZE), maxMsgNums);
  let end = 0;
  for (let i = 0; i < count; i++) {
    const offset = unitOffset(units, i);
    const recordEnd = offset + units.readInt32BE(i * CQ_UNIT_SIZE + 8);
    if (offset >= from && recordEnd - from <= PULL_SPAN_BYTES && recordEnd > end) end = recordEnd;
  }
  return end;
}

/**
 * The pull body: the records back to back. When they already lie so in the read window (one disk
 * read of a contiguous run, the common case for a backlog) that window is the body, with no copy;
 * otherwise (ring views, which later appends overwrite, or records from several reads) they are copied
 * into one new buffer and `r.messages` become views of it.
 */
export function pullBody(r: { messages: Buffer[]; bufferTotalSize: number }, window: ReadWindow): Buffer {
  const msgs = r.messages;
  const win = window.buf;
  if (win && msgs.length > 0) {
    // Each record must lie inside this window (a small window can share its ArrayBuffer with another
    // from Node's buffer pool), right after the one before.
    let at = (msgs[0] as Buffer).byteOffset - win.byteOffset;
    const from = at;
    let inside = true;
    for (let i = 0; i < msgs.length && inside; i++) {
      const m = msgs[i] as Buffer;
      inside = m.buffer === win.buffer && m.byteOffset - win.byteOffset === at && at >= 0;
      at += m.length;
    }
    if (inside && at <= win.length) return win.subarray(from, at);
  }
  const arena = acquirePullBody(r.bufferTotalSize);
  let at = 0;
  r.messages = msgs.map((m) => {
    arena.set(m, at);
    at += m.length;
    return arena.subarray(at - m.length, at);
  });
  return arena;
}
