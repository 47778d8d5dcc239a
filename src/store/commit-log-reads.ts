/**
 * Reads of the CommitLog: a record's bytes from the read cache (recently written bytes) or from its
 * segment by positional reads, and the read windows a pull reads ahead into (RocketMQ reads through
 * its mapped files: CommitLog.getMessage / getData).
 */
import fs from 'node:fs';
import { acquirePullBody, releasePullBody } from './pull-body-pool.js';
import { segmentAt, type LogState, type Segment } from './commit-log-segments.js';

/** A reader's read-ahead buffer (see `viewSync`). */
export interface ReadWindow {
  start: number;
  buf: Buffer | null;
  /**
   * Where the bytes the reader expects to ask for end (known from the consume-queue units it holds),
   * so a read-ahead stops there instead of reading bytes nobody asked for; 0 when unknown.
   */
  wantEnd: number;
  /**
   * Buffers `readWindow` took from the pull-body pool for this reader, in order; the reader hands back
   * the ones nothing refers to any more (`releaseWindows`).
   */
  slots?: Buffer[];
}

/**
 * Hands back the pooled buffers of `window` except the one `keep` lies in (a pull body that is the
 * window itself goes back once it was written out). Only once no view of them is kept anywhere.
 */
export function releaseWindows(window: ReadWindow, keep?: Uint8Array | null): void {
  const slots = window.slots;
  if (!slots) return;
  window.slots = undefined;
  for (const slot of slots) if (slot.buffer !== keep?.buffer) releasePullBody(slot);
}

/** The record's bytes, from the cache or the file; null when its segment is gone or out of range. */
export async function readRecord(s: LogState, offset: number, size: number): Promise<Buffer | null> {
  const cached = s.cache.get(offset, size);
  if (cached) return cached;
  if (size <= 0 || offset + size > s.writePos) return null;
  const seg = segmentAt(s, offset);
  if (!seg || offset + size > seg.start + s.fileSize) return null;
  seg.readers++;
  try {
    const out = Buffer.allocUnsafe(size);
    const n = await readAll(seg.fd, out, offset - seg.start);
    return n === size ? out : null;
  } finally {
    seg.readers--;
  }
}

/** Synchronous variant of `readRecord` for lookups (recovery, offset-by-time). */
export function readRecordSync(s: LogState, offset: number, size: number): Buffer | null {
  const cached = s.cache.get(offset, size);
  if (cached) return cached;
  if (size <= 0 || offset + size > s.writePos) return null;
  const seg = segmentAt(s, offset);
  if (!seg) return null;
  const out = Buffer.allocUnsafe(size);
  const n = fs.readSync(seg.fd, out, 0, size, offset - seg.start);
  return n === size ? out : null;
}

/**
 * A view of a record's bytes for a synchronous reader: from the ring (valid until the next write
 * completes, so the caller copies before yielding to the event loop), else from `window`, else by a
 * positional read into a new window of up to `readAheadBytes`, or up to `window.wantEnd` when that is
 * known. A window is a new buffer, never overwritten: its views may be kept. Null when the segment is gone.
 */
export function viewSync(
  s: LogState,
  offset: number,
  size: number,
  window: ReadWindow,
  readAheadBytes: number,
): Buffer | null {
  const v = s.cache.view(offset, size);
  if (v) return v;
  if (window.buf && offset >= window.start && offset + size <= window.start + window.buf.length) {
    return window.buf.subarray(offset - window.start, offset - window.start + size);
  }
  const seg = windowSegment(s, offset, size);
  if (!seg) return null;
  const buf = Buffer.allocUnsafe(windowLength(s, seg, offset, size, window, readAheadBytes));
  const n = fs.readSync(seg.fd, buf, 0, buf.length, offset - seg.start);
  return fillWindow(window, offset, size, buf, n);
}

/**
 * The asynchronous read of `viewSync` for a record neither in the ring nor in `window`: reads up to
 * `readAheadBytes` (or up to `window.wantEnd`) from its segment into a new window, off the event loop.
 * The segment is not deleted by retention while the read is in flight. Null when the segment is gone.
 */
export async function readWindow(
  s: LogState,
  offset: number,
  size: number,
  window: ReadWindow,
  readAheadBytes: number,
): Promise<Buffer | null> {
  const seg = windowSegment(s, offset, size);
  if (!seg) return null;
  const buf = windowBuffer(s, seg, offset, size, window, readAheadBytes);
  seg.readers++;
  let n: number;
  try {
    n = await readAll(seg.fd, buf, offset - seg.start);
  } finally {
    seg.readers--;
  }
  return fillWindow(window, offset, size, buf, n);
}

/**
 * `readWindow` on the event loop: for a record the page cache is taken to hold (near the head of the
 * log), where a positional read is a memory copy and handing it to the thread pool would cost more than
 * the copy (two thread wake-ups, and the answer waits for its turn on the loop). RocketMQ reads such
 * records through its mapped file, on the pulling thread, too.
 */
export function readWindowSync(
  s: LogState,
  offset: number,
  size: number,
  window: ReadWindow,
  readAheadBytes: number,
): Buffer | null {
  const seg = windowSegment(s, offset, size);
  if (!seg) return null;
  const buf = windowBuffer(s, seg, offset, size, window, readAheadBytes);
  let n = 0;
  while (n < buf.length) {
    const got = fs.readSync(seg.fd, buf, n, buf.length - n, offset - seg.start + n);
    if (got === 0) break;
    n += got;
  }
  return fillWindow(window, offset, size, buf, n);
}

/** The segment a read window at `offset` reads from, or null when the record is not in the log. */
function windowSegment(s: LogState, offset: number, size: number): Segment | null {
  if (size <= 0 || offset + size > s.writePos || s.closed) return null;
  const seg = segmentAt(s, offset);
  return seg && offset + size <= seg.start + s.fileSize ? seg : null;
}

/** Bytes a new read window reads: the record, up to `window.wantEnd` (else the read-ahead), within its segment. */
function windowLength(
  s: LogState,
  seg: Segment,
  offset: number,
  size: number,
  window: ReadWindow,
  readAhead: number,
): number {
  // A known extent was bounded by the reader (it may pass `readAhead` to cover a whole pull in one read).
  const wanted = window.wantEnd > offset ? window.wantEnd - offset : readAhead;
  return Math.max(size, Math.min(wanted, seg.start + s.fileSize - offset, s.writePos - offset));
}

/** Makes the `n` bytes read into `buf` the window; the record's view, or null on a short read. */
function fillWindow(window: ReadWindow, offset: number, size: number, buf: Buffer, n: number): Buffer | null {
  if (n < size) return null;
  window.start = offset;
  window.buf = buf.subarray(0, n);
  return buf.subarray(0, size);
}

/** A reused buffer for a new read window, owned by `window` until `releaseWindows`. */
function windowBuffer(
  s: LogState,
  seg: Segment,
  offset: number,
  size: number,
  window: ReadWindow,
  readAhead: number,
): Buffer {
  // Reused memory: a fresh buffer of tens or hundreds of KiB per read costs more in page faults than the read.
  const buf = acquirePullBody(windowLength(s, seg, offset, size, window, readAhead));
  (window.slots ??= []).push(buf);
  return buf;
}

function readAll(fd: number, buf: Buffer, position: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const step = (done: number): void => {
      fs.read(fd, buf, done, buf.length - done, position + done, (err, n) => {
        if (err) return reject(err);
        if (n === 0 || done + n >= buf.length) return resolve(done + n);
        step(done + n);
      });
    };
    step(0);
  });
}
