/**
 * The put path of the CommitLog (RocketMQ: CommitLog.asyncPutMessage, and GroupCommitService for
 * SYNC_FLUSH). Appends are batched: every append made in the same event-loop turn joins one synchronous
 * write (one writev per segment). An append is settled only after its bytes are in the file (the page
 * cache), and in SYNC_FLUSH after an fdatasync shared by every batch written meanwhile (group commit).
 */
import fs from 'node:fs';
import { types } from 'node:util';
import type { Logger } from '../common/logger.js';
import { SlotSet } from '../common/slot-set.js';
import { writeBlankRecord } from '../common/codec/index.js';
import { END_FILE_MIN_BLANK_LENGTH } from './layout.js';
import { createSegment, segmentAt, type LogState, type Segment } from './commit-log-segments.js';

/** One append waiting for its place in the log. */
export interface AppendRequest {
  record: Buffer;
  /** Called in log order just before the batch is written: fill in offsets and the store time. */
  assign(physicalOffset: number): void;
  /** Called in reverse log order when the batch could not be written: take back what `assign` did. */
  rollback(): void;
  /** Called in log order right after the bytes are in the file (before any fsync). */
  written(): void;
  /** Settles the append; `flushOk` false means the SYNC_FLUSH fsync timed out. */
  settle(err: Error | null, flushOk: boolean): void;
}

export interface WriterOptions {
  syncFlush: boolean;
  syncFlushTimeoutMs: number;
  logger: Logger;
  setTimeout(fn: () => void, ms: number): () => void;
  /** The fdatasync used by flushes (the real one unless a test slows it down). */
  fdatasync?: (fd: number) => Promise<void>;
}

/** The bytes one batch writes into one segment. */
interface Chunk {
  seg: Segment;
  start: number;
  end: number;
  parts: Buffer[];
  /** The filler closing the segment, when this chunk ends it. */
  blank: Buffer | null;
}

/**
 * The read cache's ring is touched ahead of the writer, a slice per tick: appends then copy into pages
 * already mapped instead of faulting a fresh page in on the way to their acknowledgement. The lead is
 * what a steady flow of sends writes in a few seconds; a faster writer (a backlog preload) outruns it
 * and faults its pages in itself, as without it. Resident memory grows with the log as before, plus at
 * most the lead.
 */
const PREFAULT_LEAD_BYTES = 8 * 1024 * 1024;
/** Bytes touched per tick: small enough that a tick never holds up the event loop noticeably. */
const PREFAULT_SLICE_BYTES = 256 * 1024;
const PREFAULT_TICK_MS = 10;

// isNativeError, not instanceof: an fs error may come from another realm (a vm context) and keeps its code.
const asError = (e: unknown): Error => (types.isNativeError(e) ? e : new Error(String(e)));

export class CommitLogWriter {
  private pending: AppendRequest[] = [];
  private scheduled = false;
  /** SYNC_FLUSH batches written and waiting for their fdatasync. */
  private readonly syncing = new SlotSet<Promise<void>>();
  /** Where the next record is placed (equal to `writePos` between batches). */
  private layoutPos = 0;
  private failed: Error | null = null;
  private flushing: Promise<void> | null = null;
  /** Cancels the pending pre-fault tick of the read cache, when one is scheduled. */
  private cancelPrefault: (() => void) | null = null;

  constructor(
    private readonly s: LogState,
    private readonly o: WriterOptions,
  ) {}

  /** Starts placing records at `writePos` (once recovery found where the log ends). */
  startAtWritePos(): void {
    this.layoutPos = this.s.writePos;
    this.schedulePrefault();
  }

  /** Waits until no append is queued, being written or waiting for its fdatasync. */
  async drain(): Promise<void> {
    while (this.syncing.size > 0 || this.scheduled || this.pending.length > 0) {
      if (this.syncing.size > 0) await Promise.allSettled(this.syncing.toArray());
      else await new Promise<void>((r) => setImmediate(r));
    }
  }

  /**
   * Queues an append; the batch writer runs once the event loop has handled the I/O events at hand
   * (setImmediate), so the appends of every request read in one loop turn share one write. A
   * microtask would write once per request: each HTTP request runs in its own callback, and a
   * positional write costs a system call, which dominated a 32-way concurrent send.
   */
  append(req: AppendRequest): void {
    if (this.failed) return req.settle(this.failed, false);
    this.pending.push(req);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.runWrites);
    }
  }

  private readonly runWrites = (): void => this.startWrites();

  /** Schedules the next slice of read-cache pre-faulting while the ring's pages ahead of the writer are untouched. */
  private schedulePrefault(): void {
    const s = this.s;
    if (this.cancelPrefault !== null || s.closed || s.cache.untouchedAhead(PREFAULT_LEAD_BYTES) === 0) return;
    this.cancelPrefault = this.o.setTimeout(() => {
      this.cancelPrefault = null;
      if (s.closed) return;
      s.cache.prefault(PREFAULT_SLICE_BYTES, PREFAULT_LEAD_BYTES);
      this.schedulePrefault();
    }, PREFAULT_TICK_MS);
  }

  stopPrefault(): void {
    this.cancelPrefault?.();
    this.cancelPrefault = null;
  }

  /**
   * Writes every pending append as one batch: places it (offsets are assigned here, in log order) and
   * writes it with synchronous positional writes (one writev per segment).
   *
   * Why synchronous: an append only has to reach the page cache, which is a memory copy (RocketMQ
   * copies into a mapped file in the put path for the same reason). An async fs call is a round trip
   * through the libuv thread pool, which costs several times the CPU and wall time of a small writevSync
   * whatever its size; with few appends per batch (an awaited send, or 32 producers) that round trip was
   * most of a send's broker-side cost. A sync write can block the event loop while the kernel throttles
   * dirty pages — RocketMQ's mapped-file copy would stall the same way. SYNC_FLUSH still fdatasyncs off
   * the main thread, shared by every batch written meanwhile.
   */
  private startWrites(): void {
    this.scheduled = false;
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    if (this.failed) {
      for (const r of batch) r.settle(this.failed, false);
      return;
    }
    const s = this.s;
    let chunks: Chunk[];
    try {
      chunks = this.layOut(batch);
    } catch (e) {
      // Nothing was assigned or written: the batch is refused and the log is as it was.
      const err = asError(e);
      this.o.logger.error(
        { err, at: s.writePos, records: batch.length },
        'commit log: segment roll failed; batch refused',
      );
      for (const r of batch) r.settle(err, false);
      return;
    }
    try {
      for (const c of chunks) writeAllSync(c.seg.fd, c.parts, c.start - c.seg.start);
    } catch (e) {
      const err = asError(e);
      for (let i = batch.length - 1; i >= 0; i--) (batch[i] as AppendRequest).rollback();
      this.layoutPos = s.writePos;
      // Take back the bytes written: a later append (or recovery) must not find half a batch there.
      // When even that fails, refuse every later append rather than write past a hole.
      if (this.undoWrite()) {
        this.o.logger.error({ err, at: s.writePos, records: batch.length }, 'commit log: write failed; batch refused');
      } else {
        this.failed = err;
        this.o.logger.error({ err }, 'commit log: write failed and could not be undone; appends refused until restart');
      }
      for (const r of batch) r.settle(err, false);
      return;
    }
    for (const c of chunks) {
      let at = c.start;
      for (const part of c.parts) {
        if (part !== c.blank) s.cache.add(at, part);
        at += part.length;
      }
      s.writePos = c.blank ? c.seg.start + s.fileSize : c.end;
    }
    this.schedulePrefault();
    for (const r of batch) r.written();
    if (!this.o.syncFlush) {
      for (const r of batch) r.settle(null, true);
      return;
    }
    // Group commit: flush() shares one fdatasync among every batch written while one is running, and
    // batches settle in log order because their flushes resolve in order.
    const synced = this.syncWithTimeout().then(
      (flushOk) => {
        for (const r of batch) r.settle(null, flushOk);
      },
      (e: unknown) => {
        const err = asError(e);
        if (!this.failed) {
          this.failed = err;
          this.o.logger.error({ err }, 'commit log: fdatasync failed; appends refused until restart');
        }
        for (const r of batch) r.settle(err, false);
      },
    );
    const slot = this.syncing.add(synced);
    void synced.finally(() => this.syncing.delete(slot, synced));
  }

  /**
   * Places each record, adding fillers and segments; one write per segment. Every segment the batch
   * needs is opened before any record is assigned its place: a failed roll (EMFILE, ENOSPC, EISDIR)
   * throws with nothing assigned and the segments it had created removed.
   */
  private layOut(batch: AppendRequest[]): Chunk[] {
    const size = this.s.fileSize;
    const out: Chunk[] = [];
    const places: number[] = [];
    const created: Segment[] = [];
    let pos = this.layoutPos;
    let chunk: Chunk | null = null;
    try {
      for (const r of batch) {
        const len = r.record.length;
        const inSeg = pos % size;
        if (inSeg + len + END_FILE_MIN_BLANK_LENGTH > size) {
          const blank = Buffer.allocUnsafe(END_FILE_MIN_BLANK_LENGTH);
          writeBlankRecord(blank, 0, size - inSeg);
          chunk ??= { seg: this.segmentFor(pos, created), start: pos, end: pos, parts: [], blank: null };
          chunk.parts.push(blank);
          chunk.blank = blank;
          chunk.end = pos + END_FILE_MIN_BLANK_LENGTH;
          out.push(chunk);
          chunk = null;
          pos += size - inSeg;
        }
        chunk ??= { seg: this.segmentFor(pos, created), start: pos, end: pos, parts: [], blank: null };
        places.push(pos);
        chunk.parts.push(r.record);
        pos += len;
        chunk.end = pos;
      }
    } catch (e) {
      this.dropSegments(created);
      throw e;
    }
    if (chunk) out.push(chunk);
    for (let i = 0; i < batch.length; i++) (batch[i] as AppendRequest).assign(places[i] as number);
    this.layoutPos = pos;
    return out;
  }

  private segmentFor(offset: number, created: Segment[]): Segment {
    const s = this.s;
    const start = offset - (offset % s.fileSize);
    const last = s.segments.at(-1);
    if (last && last.start === start) return last;
    const seg = createSegment(s.dir, start);
    s.segments.push(seg);
    created.push(seg);
    return seg;
  }

  /** Closes and deletes segments a failed batch created. */
  private dropSegments(created: Segment[]): void {
    for (const seg of created) {
      const i = this.s.segments.indexOf(seg);
      if (i >= 0) this.s.segments.splice(i, 1);
      try {
        fs.closeSync(seg.fd);
        fs.rmSync(seg.path, { force: true });
      } catch (e) {
        this.o.logger.warn({ err: e, file: seg.path }, 'commit log: could not remove a segment of a failed batch');
      }
    }
  }

  /** Cuts every byte past `writePos` (a failed write); false when that failed too. */
  private undoWrite(): boolean {
    const s = this.s;
    try {
      const later = s.segments.filter((seg) => seg.start > s.writePos);
      this.dropSegments(later);
      const seg = segmentAt(s, s.writePos);
      if (seg && fs.fstatSync(seg.fd).size > s.writePos - seg.start) {
        fs.ftruncateSync(seg.fd, s.writePos - seg.start);
      }
      return s.segments.every((seg) => seg.start <= s.writePos);
    } catch (e) {
      this.o.logger.error({ err: e }, 'commit log: could not cut a failed write');
      return false;
    }
  }

  /**
   * Resolves true once the batch is fsynced, or false as soon as `syncFlushTimeoutMs` passes first
   * (RocketMQ answers FLUSH_DISK_TIMEOUT then, without waiting for the disk). The flush goes on.
   */
  private syncWithTimeout(): Promise<boolean> {
    return new Promise((resolve, reject) => {
      let answered = false;
      const cancel = this.o.setTimeout(() => {
        if (answered) return;
        answered = true;
        this.o.logger.warn(
          { timeoutMs: this.o.syncFlushTimeoutMs },
          'commit log: fdatasync slower than syncFlushTimeoutMs',
        );
        resolve(false);
      }, this.o.syncFlushTimeoutMs);
      this.flush().then(
        () => {
          cancel();
          if (!answered) {
            answered = true;
            resolve(true);
          }
        },
        (e: unknown) => {
          cancel();
          if (!answered) {
            answered = true;
            reject(e);
          } else if (!this.failed) {
            this.failed = asError(e);
            this.o.logger.error({ err: e }, 'commit log: fdatasync failed; appends refused until restart');
          }
        },
      );
    });
  }

  /** fdatasyncs every segment holding unflushed bytes; concurrent callers share one flush. */
  flush(): Promise<void> {
    const s = this.s;
    if (this.flushing) return this.flushing.then(() => (s.flushed < s.writePos ? this.flush() : undefined));
    if (s.flushed >= s.writePos || s.closed) return Promise.resolve();
    const target = s.writePos;
    const from = s.flushed;
    const segs = s.segments.filter((seg) => seg.start + s.fileSize > from && seg.start < target);
    const sync = this.o.fdatasync ?? fdatasync;
    this.flushing = Promise.all(segs.map((seg) => sync(seg.fd)))
      .then(() => {
        s.flushed = Math.max(s.flushed, target);
      })
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }
}

/** Writes `parts` back to back at `position` (one writevSync, repeated on a short write). */
function writeAllSync(fd: number, parts: Buffer[], position: number): void {
  let bufs = parts;
  let pos = position;
  for (;;) {
    const n = fs.writevSync(fd, bufs, pos);
    let left = n;
    let i = 0;
    while (i < bufs.length && left >= (bufs[i] as Buffer).length) left -= (bufs[i++] as Buffer).length;
    if (i >= bufs.length) return;
    bufs = bufs.slice(i);
    bufs[0] = (bufs[0] as Buffer).subarray(left);
    pos += n;
  }
}

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (e) => (e ? reject(e) : resolve())));
}
