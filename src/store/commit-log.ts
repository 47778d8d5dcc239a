/**
 * CommitLog: the append-only log of stored records, cut into segments of `fileSize` bytes named by
 * their 20-digit start offset (commitlog/<offset>). A record never spans segments: when a record plus
 * the 8-byte filler does not fit, the filler `[int remaining][int BLANK_MAGIC]` closes the segment and
 * the record starts the next one (RocketMQ: CommitLog, MappedFileQueue).
 *
 * Appends are batched: every append made in the same event-loop turn joins one synchronous write (one
 * writev per segment; see `append` and `startWrites`). An append is settled only after its bytes are in the file (the page
 * cache), and in SYNC_FLUSH after an fdatasync shared by every batch written meanwhile (group commit).
 * Recently written bytes stay in a bounded read cache; older ones are read with positional reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import { types } from 'node:util';
import type { Logger } from '../common/logger.js';
import { SlotSet } from '../common/slot-set.js';
import {
  BLANK_MAGIC_CODE,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  checkRecord,
  writeBlankRecord,
} from '../common/codec/index.js';
import { StoreLayoutError } from './store-files.js';
import { COMMITLOG_DIR, END_FILE_MIN_BLANK_LENGTH, fileNameToOffset, offsetToFileName } from './layout.js';
import { ReadCache } from './read-cache.js';
import { acquirePullBody, releasePullBody } from './pull-body-pool.js';

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
 * what a steady flow of sends writes in seconds (2,000 msg/s of 1 KiB is ~2.4 MB/s); a faster writer
 * (a backlog preload) outruns it and faults its pages in itself, as without it. Resident memory grows
 * with the log as before, plus at most the lead.
 */
const PREFAULT_LEAD_BYTES = 8 * 1024 * 1024;
/** Bytes touched per tick (64 pages: well under a millisecond of the event loop). */
const PREFAULT_SLICE_BYTES = 256 * 1024;
const PREFAULT_TICK_MS = 10;

// isNativeError, not instanceof: an fs error may come from another realm (a vm context) and keeps its code.
const asError = (e: unknown): Error => (types.isNativeError(e) ? e : new Error(String(e)));

interface Segment {
  start: number;
  path: string;
  fd: number;
  /** Reads in flight on this segment: retention never deletes a segment being read. */
  readers: number;
}

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

export interface CommitLogOptions {
  fileSize: number;
  readCacheSizeBytes: number;
  syncFlush: boolean;
  syncFlushTimeoutMs: number;
  logger: Logger;
  setTimeout(fn: () => void, ms: number): () => void;
  /**
   * Why a record that passed the size, magic and CRC checks is still not valid (its header is not
   * self-consistent), or null. Recovery skips such a record like any damaged one.
   */
  recordProblem?: (record: Buffer, offset: number) => string | null;
  /** The fdatasync used by flushes (the real one unless a test slows it down). */
  fdatasync?: (fd: number) => Promise<void>;
}

/** What recovery found: where the valid log ends and what it cut off. */
export interface RecoveryReport {
  scannedFrom: number;
  validEnd: number;
  droppedBytes: number;
  reason: string | null;
  /** Damaged records or ranges inside the log that were skipped (kept on disk, never served). */
  skippedRecords: number;
  skippedBytes: number;
}

export class CommitLog {
  readonly dir: string;
  private readonly segments: Segment[] = [];
  private writePos = 0;
  private flushed = 0;
  private pending: AppendRequest[] = [];
  private scheduled = false;
  /** SYNC_FLUSH batches written and waiting for their fdatasync. */
  private readonly syncing = new SlotSet<Promise<void>>();
  /** Where the next record is placed (equal to `writePos` between batches). */
  private layoutPos = 0;
  private failed: Error | null = null;
  private minAtClose = 0;
  private flushing: Promise<void> | null = null;
  private readonly cache: ReadCache;
  private closed = false;
  private lastSkipped = { records: 0, bytes: 0 };
  /** Cancels the pending pre-fault tick of the read cache, when one is scheduled. */
  private cancelPrefault: (() => void) | null = null;

  constructor(
    storePath: string,
    private readonly o: CommitLogOptions,
  ) {
    this.dir = path.join(storePath, COMMITLOG_DIR);
    this.cache = new ReadCache(o.readCacheSizeBytes);
  }

  get fileSize(): number {
    return this.o.fileSize;
  }
  /** Offset of the first byte still present (start of the oldest segment). */
  get minOffset(): number {
    return this.closed ? this.minAtClose : (this.segments[0]?.start ?? this.writePos);
  }
  /** Offset where the next record goes. */
  get maxOffset(): number {
    return this.writePos;
  }
  get flushedOffset(): number {
    return this.flushed;
  }
  get segmentCount(): number {
    return this.segments.length;
  }

  /**
   * Opens the segments and verifies the log from `scanFrom` (clamped to a segment start) to its end,
   * record by record (size, magic, CRC, own offset). A torn or corrupt tail is cut off: the segment is
   * truncated and every later segment deleted. `onRecord` sees each valid record at or after
   * `dispatchFrom`, in order (for re-dispatch).
   */
  recover(
    scanFrom: number,
    tailSegments: number,
    dispatchFrom: number,
    onRecord: (buf: Buffer, at: number, offset: number) => void,
  ): RecoveryReport {
    fs.mkdirSync(this.dir, { recursive: true });
    const size = this.o.fileSize;
    const found = fs
      .readdirSync(this.dir)
      .map((n) => ({ n, off: fileNameToOffset(n) }))
      .filter((e): e is { n: string; off: number } => e.off !== null)
      .sort((a, b) => a.off - b.off);
    checkSegmentLayout(
      this.dir,
      found.map(({ n, off }) => ({ name: n, start: off, bytes: fs.statSync(path.join(this.dir, n)).size })),
      size,
    );
    for (const { n, off } of found) {
      const p = path.join(this.dir, n);
      this.segments.push({ start: off, path: p, fd: fs.openSync(p, 'r+'), readers: 0 });
    }
    const first = this.segments[0];
    const last = this.segments.at(-1);
    if (!first || !last) {
      this.writePos = this.layoutPos = this.flushed = 0;
      this.schedulePrefault();
      return { scannedFrom: 0, validEnd: 0, droppedBytes: 0, reason: null, skippedRecords: 0, skippedBytes: 0 };
    }
    let from = Math.max(scanFrom, first.start);
    if (tailSegments > 0) from = Math.min(from, (this.segments.at(-tailSegments) ?? first).start);
    const seg = this.segmentAt(from);
    // A start past the data (a checkpoint ahead of a shortened file): verify the whole last segment.
    if (!seg || from - seg.start > fs.fstatSync(seg.fd).size)
      from = Math.min(last.start, Math.max(from - (from % size), first.start));
    const report = this.scan(from, dispatchFrom, onRecord);
    this.writePos = this.layoutPos = report.validEnd;
    this.cache.startAt(report.validEnd);
    this.flushed = Math.min(from, report.validEnd);
    this.schedulePrefault();
    return report;
  }

  /** Where the segment files on disk start and (at most) end, before recovery opens them. */
  peekBounds(): { min: number; end: number } {
    if (!fs.existsSync(this.dir)) return { min: 0, end: 0 };
    const found = fs
      .readdirSync(this.dir)
      .map((n) => ({ n, off: fileNameToOffset(n) }))
      .filter((e): e is { n: string; off: number } => e.off !== null)
      .sort((a, b) => a.off - b.off);
    const first = found[0];
    const last = found.at(-1);
    if (!first || !last) return { min: 0, end: 0 };
    return { min: first.off, end: last.off + fs.statSync(path.join(this.dir, last.n)).size };
  }

  /** Closes every descriptor at once (a failed open). */
  closeNow(): void {
    this.closed = true;
    this.stopPrefault();
    for (const s of this.segments.splice(0)) fs.closeSync(s.fd);
    this.cache.clear();
  }

  /**
   * Verifies records from `from` to the end of the log. A damaged record or range inside the log (one
   * followed by a valid record of the same segment, or by later segments) is skipped and logged, never
   * a reason to cut what follows: records state their own offset, so the next valid one is found by
   * searching for a record that names the position it sits at. Only a damaged tail is cut.
   */
  private scan(
    from: number,
    dispatchFrom: number,
    onRecord: (buf: Buffer, at: number, offset: number) => void,
  ): RecoveryReport {
    const size = this.o.fileSize;
    let buf = Buffer.allocUnsafe(Math.min(size, 16 * 1024 * 1024));
    const startIdx = this.segments.findIndex((s) => from >= s.start && from < s.start + size);
    let skippedRecords = 0;
    let skippedBytes = 0;
    for (let idx = startIdx; idx < this.segments.length; idx++) {
      const seg = this.segments[idx] as Segment;
      const isLast = idx === this.segments.length - 1;
      const fileLen = Math.min(fs.fstatSync(seg.fd).size, size);
      let filePos = idx === startIdx ? from - seg.start : 0;
      let ended = false;
      while (!ended && filePos < fileLen) {
        const n = fs.readSync(seg.fd, buf, 0, Math.min(buf.length, fileLen - filePos), filePos);
        const view = buf.subarray(0, n);
        let p = 0;
        let damage: string | null = null;
        while (p < n) {
          const c = checkRecord(view, p);
          if (c.kind === 'blank') {
            if (filePos + p + c.size !== size) {
              throw new StoreLayoutError(
                'mappedFileSizeCommitLog',
                `the segment-end filler at ${seg.start + filePos + p} says segment ${seg.path} is ${filePos + p + c.size} bytes, ` +
                  `not mappedFileSizeCommitLog = ${size}: the store was written with another segment size; open it with that size`,
              );
            }
            ended = true;
            break;
          }
          if (c.kind === 'invalid') {
            // A record cut by the end of the read (not of the file) is read again from its start.
            if (c.truncated && filePos + n < fileLen) {
              const need = n - p >= 4 ? view.readInt32BE(p) : 0;
              if (p > 0) break;
              if (need > n && need <= fileLen - filePos && need <= size) {
                buf = Buffer.allocUnsafe(need);
                break;
              }
            }
            damage = c.reason;
            break;
          }
          const offset = seg.start + filePos + p;
          const stated = view.readUInt32BE(p + 28) * 0x1_0000_0000 + view.readUInt32BE(p + 32);
          if (stated !== offset) {
            damage = `record at ${offset} says it is at ${stated}`;
            break;
          }
          const problem = this.o.recordProblem?.(view.subarray(p, p + c.size), offset) ?? null;
          if (problem !== null) {
            damage = `record at ${offset}: ${problem}`;
            break;
          }
          if (offset >= dispatchFrom) onRecord(view, p, offset);
          p += c.size;
        }
        filePos += p;
        if (damage === null) continue;
        const resume = this.findNextRecord(seg, filePos + 1, fileLen);
        if (resume === null && isLast) {
          if (skippedRecords > 0) this.logSkipped(skippedRecords, skippedBytes);
          return this.cut(from, seg.start + filePos, damage);
        }
        const end = resume ?? fileLen;
        skippedRecords++;
        skippedBytes += end - filePos;
        this.o.logger.warn(
          { at: seg.start + filePos, skippedBytes: end - filePos, reason: damage, resumedAt: seg.start + end },
          resume === null
            ? 'commit log: damaged range skipped up to the end of its segment; later segments kept'
            : 'commit log: damaged record skipped; the records after it are kept',
        );
        filePos = end;
        if (resume === null) ended = true;
      }
      if (!ended && !isLast) {
        skippedRecords++;
        this.o.logger.warn(
          { at: seg.start + filePos, segment: seg.path },
          'commit log: segment ends without its filler; later segments kept',
        );
        ended = true;
      }
      if (!ended) {
        if (skippedRecords > 0) this.logSkipped(skippedRecords, skippedBytes);
        return this.cut(from, seg.start + filePos, null);
      }
    }
    if (skippedRecords > 0) this.logSkipped(skippedRecords, skippedBytes);
    const last = this.segments.at(-1) as Segment;
    return {
      scannedFrom: from,
      validEnd: last.start + size,
      droppedBytes: 0,
      reason: null,
      skippedRecords,
      skippedBytes,
    };
  }

  private logSkipped(records: number, bytes: number): void {
    this.lastSkipped = { records, bytes };
    this.o.logger.warn({ skippedRanges: records, skippedBytes: bytes }, 'commit log: damaged records skipped');
  }

  /**
   * The file position of the first valid record (one that names its own offset, CRC included) or
   * segment-end filler at or after `filePos`, or null when there is none before `fileLen`.
   */
  private findNextRecord(seg: Segment, filePos: number, fileLen: number): number | null {
    const window = 1024 * 1024;
    const buf = Buffer.allocUnsafe(window + 8);
    const magics = [MAGIC_CODE_V1, MAGIC_CODE_V2, BLANK_MAGIC_CODE].map((m) => {
      const b = Buffer.allocUnsafe(4);
      b.writeInt32BE(m, 0);
      return b;
    });
    for (let at = filePos; at < fileLen; at += window) {
      const n = fs.readSync(seg.fd, buf, 0, Math.min(buf.length, fileLen - at + 4), Math.max(0, at - 4));
      const base = Math.max(0, at - 4);
      const hits: number[] = [];
      for (const m of magics) {
        for (let i = buf.indexOf(m, 0); i >= 0 && i < n; i = buf.indexOf(m, i + 1)) {
          const start = base + i - 4;
          if (start >= filePos && start < at + window) hits.push(start);
        }
      }
      hits.sort((a, b) => a - b);
      for (const start of hits) if (this.isRecordStart(seg, start, fileLen)) return start;
    }
    return null;
  }

  /** Whether a valid record naming its own offset, or the segment-end filler, starts at `start`. */
  private isRecordStart(seg: Segment, start: number, fileLen: number): boolean {
    if (start < 0 || start + 8 > fileLen) return false;
    const head = Buffer.allocUnsafe(8);
    fs.readSync(seg.fd, head, 0, 8, start);
    const len = head.readInt32BE(0);
    if (head.readInt32BE(4) === BLANK_MAGIC_CODE) return start + len === this.o.fileSize;
    if (len < 8 || start + len > fileLen) return false;
    const rec = Buffer.allocUnsafe(len);
    if (fs.readSync(seg.fd, rec, 0, len, start) !== len || checkRecord(rec, 0).kind !== 'message') return false;
    if (rec.readUInt32BE(28) * 0x1_0000_0000 + rec.readUInt32BE(32) !== seg.start + start) return false;
    return (this.o.recordProblem?.(rec, seg.start + start) ?? null) === null;
  }

  /** Truncates the log at `pos` (inside segment of `pos`) and deletes every later segment. */
  private cut(from: number, pos: number, reason: string | null): RecoveryReport {
    const size = this.o.fileSize;
    let dropped = 0;
    const keepIdx = this.segments.findIndex((s) => pos >= s.start && pos < s.start + size);
    for (let i = this.segments.length - 1; i > keepIdx; i--) {
      const s = this.segments[i] as Segment;
      dropped += fs.fstatSync(s.fd).size;
      fs.closeSync(s.fd);
      fs.rmSync(s.path, { force: true });
      this.segments.pop();
    }
    const seg = this.segments[keepIdx];
    if (seg) {
      const len = fs.fstatSync(seg.fd).size;
      if (len > pos - seg.start) {
        dropped += len - (pos - seg.start);
        fs.ftruncateSync(seg.fd, pos - seg.start);
      }
    }
    if (dropped > 0 || reason) {
      this.o.logger.warn({ at: pos, droppedBytes: dropped, reason }, 'commit log: torn or corrupt tail cut off');
    }
    return {
      scannedFrom: from,
      validEnd: pos,
      droppedBytes: dropped,
      reason: dropped > 0 ? reason : null,
      skippedRecords: this.lastSkipped.records,
      skippedBytes: this.lastSkipped.bytes,
    };
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
    if (this.cancelPrefault !== null || this.closed || this.cache.untouchedAhead(PREFAULT_LEAD_BYTES) === 0) return;
    this.cancelPrefault = this.o.setTimeout(() => {
      this.cancelPrefault = null;
      if (this.closed) return;
      this.cache.prefault(PREFAULT_SLICE_BYTES, PREFAULT_LEAD_BYTES);
      this.schedulePrefault();
    }, PREFAULT_TICK_MS);
  }

  /** Largest record a segment can hold (room for the filler after it). */
  get maxRecordSize(): number {
    return this.o.fileSize - END_FILE_MIN_BLANK_LENGTH;
  }

  /**
   * Writes every pending append as one batch: places it (offsets are assigned here, in log order) and
   * writes it with synchronous positional writes (one writev per segment).
   *
   * Why synchronous: an append only has to reach the page cache, which is a memory copy (RocketMQ
   * copies into a mapped file in the put path for the same reason). An async fs call is a round trip
   * through the libuv thread pool, measured here at ~50 µs of CPU and wall time per call whatever its
   * size, against ~5–10 µs for a 1 KiB writevSync; with few appends per batch (an awaited send, or 32
   * producers) that round trip was most of a send's broker-side cost. A sync write can block the event
   * loop while the kernel throttles dirty pages — RocketMQ's mapped-file copy would stall the same way.
   * SYNC_FLUSH still fdatasyncs off the main thread, shared by every batch written meanwhile.
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
    let chunks: Chunk[];
    try {
      chunks = this.layOut(batch);
    } catch (e) {
      // Nothing was assigned or written: the batch is refused and the log is as it was.
      const err = asError(e);
      this.o.logger.error(
        { err, at: this.writePos, records: batch.length },
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
      this.layoutPos = this.writePos;
      // Take back the bytes written: a later append (or recovery) must not find half a batch there.
      // When even that fails, refuse every later append rather than write past a hole.
      if (this.undoWrite()) {
        this.o.logger.error(
          { err, at: this.writePos, records: batch.length },
          'commit log: write failed; batch refused',
        );
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
        if (part !== c.blank) this.cache.add(at, part);
        at += part.length;
      }
      this.writePos = c.blank ? c.seg.start + this.o.fileSize : c.end;
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
    const size = this.o.fileSize;
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
    const size = this.o.fileSize;
    const start = offset - (offset % size);
    const last = this.segments.at(-1);
    if (last && last.start === start) return last;
    fs.mkdirSync(this.dir, { recursive: true });
    const p = path.join(this.dir, offsetToFileName(start));
    const seg: Segment = { start, path: p, fd: fs.openSync(p, 'w+'), readers: 0 };
    this.segments.push(seg);
    created.push(seg);
    return seg;
  }

  /** Closes and deletes segments a failed batch created. */
  private dropSegments(created: Segment[]): void {
    for (const seg of created) {
      const i = this.segments.indexOf(seg);
      if (i >= 0) this.segments.splice(i, 1);
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
    try {
      const later = this.segments.filter((s) => s.start > this.writePos);
      this.dropSegments(later);
      const seg = this.segmentAt(this.writePos);
      if (seg && fs.fstatSync(seg.fd).size > this.writePos - seg.start) {
        fs.ftruncateSync(seg.fd, this.writePos - seg.start);
      }
      return this.segments.every((s) => s.start <= this.writePos);
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
    if (this.flushing) return this.flushing.then(() => (this.flushed < this.writePos ? this.flush() : undefined));
    if (this.flushed >= this.writePos || this.closed) return Promise.resolve();
    const target = this.writePos;
    const from = this.flushed;
    const segs = this.segments.filter((s) => s.start + this.o.fileSize > from && s.start < target);
    const sync = this.o.fdatasync ?? fdatasync;
    this.flushing = Promise.all(segs.map((s) => sync(s.fd)))
      .then(() => {
        this.flushed = Math.max(this.flushed, target);
      })
      .finally(() => {
        this.flushing = null;
      });
    return this.flushing;
  }

  /** Whether the bytes are in the read cache. */
  isCached(offset: number, size: number): boolean {
    return this.cache.has(offset, size);
  }

  /** The cached bytes of a record (a copy), or undefined when they are not in the read cache. */
  readCached(offset: number, size: number): Buffer | undefined {
    return this.cache.get(offset, size);
  }

  /** The record's bytes, from the cache or the file; null when its segment is gone or out of range. */
  async read(offset: number, size: number): Promise<Buffer | null> {
    const cached = this.cache.get(offset, size);
    if (cached) return cached;
    if (size <= 0 || offset + size > this.writePos) return null;
    const seg = this.segmentAt(offset);
    if (!seg || offset + size > seg.start + this.o.fileSize) return null;
    seg.readers++;
    try {
      const out = Buffer.allocUnsafe(size);
      const n = await readAll(seg.fd, out, offset - seg.start);
      return n === size ? out : null;
    } finally {
      seg.readers--;
    }
  }

  /**
   * A view of a record's bytes for a synchronous reader: from the ring (valid until the next write
   * completes, so the caller copies before yielding to the event loop), else from `window`, else by a
   * positional read into a new window of up to `readAheadBytes`, or up to `window.wantEnd` when that is
   * known. A window is a new buffer, never overwritten: its views may be kept. Null when the segment is gone.
   */
  viewSync(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Buffer | null {
    const v = this.cache.view(offset, size);
    if (v) return v;
    if (window.buf && offset >= window.start && offset + size <= window.start + window.buf.length) {
      return window.buf.subarray(offset - window.start, offset - window.start + size);
    }
    const seg = this.windowSegment(offset, size);
    if (!seg) return null;
    const buf = Buffer.allocUnsafe(this.windowLength(seg, offset, size, window, readAheadBytes));
    const n = fs.readSync(seg.fd, buf, 0, buf.length, offset - seg.start);
    return this.fillWindow(window, offset, size, buf, n);
  }

  /** The segment a read window at `offset` reads from, or null when the record is not in the log. */
  private windowSegment(offset: number, size: number): Segment | null {
    if (size <= 0 || offset + size > this.writePos || this.closed) return null;
    const seg = this.segmentAt(offset);
    return seg && offset + size <= seg.start + this.o.fileSize ? seg : null;
  }

  /** Bytes a new read window reads: the record, up to `window.wantEnd` (else the read-ahead), within its segment. */
  private windowLength(seg: Segment, offset: number, size: number, window: ReadWindow, readAhead: number): number {
    // A known extent was bounded by the reader (it may pass `readAhead` to cover a whole pull in one read).
    const wanted = window.wantEnd > offset ? window.wantEnd - offset : readAhead;
    return Math.max(size, Math.min(wanted, seg.start + this.o.fileSize - offset, this.writePos - offset));
  }

  /** Makes the `n` bytes read into `buf` the window; the record's view, or null on a short read. */
  private fillWindow(window: ReadWindow, offset: number, size: number, buf: Buffer, n: number): Buffer | null {
    if (n < size) return null;
    window.start = offset;
    window.buf = buf.subarray(0, n);
    return buf.subarray(0, size);
  }

  /** A view of a record's bytes in the read cache (valid until the ring wraps past it), or undefined. */
  ringView(offset: number, size: number): Buffer | undefined {
    return this.cache.view(offset, size);
  }

  /**
   * The asynchronous read of `viewSync` for a record neither in the ring nor in `window`: reads up to
   * `readAheadBytes` (or up to `window.wantEnd`) from its segment into a new window, off the event loop.
   * The segment is not deleted by retention while the read is in flight. Null when the segment is gone.
   */
  async readWindow(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Promise<Buffer | null> {
    const seg = this.windowSegment(offset, size);
    if (!seg) return null;
    const buf = this.windowBuffer(seg, offset, size, window, readAheadBytes);
    seg.readers++;
    let n: number;
    try {
      n = await readAll(seg.fd, buf, offset - seg.start);
    } finally {
      seg.readers--;
    }
    return this.fillWindow(window, offset, size, buf, n);
  }

  /**
   * `readWindow` on the event loop: for a record the page cache is taken to hold (near the head of the
   * log), where a positional read is a memory copy and handing it to the thread pool would cost more than
   * the copy (two thread wake-ups, and the answer waits for its turn on the loop). RocketMQ reads such
   * records through its mapped file, on the pulling thread, too.
   */
  readWindowSync(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Buffer | null {
    const seg = this.windowSegment(offset, size);
    if (!seg) return null;
    const buf = this.windowBuffer(seg, offset, size, window, readAheadBytes);
    let n = 0;
    while (n < buf.length) {
      const got = fs.readSync(seg.fd, buf, n, buf.length - n, offset - seg.start + n);
      if (got === 0) break;
      n += got;
    }
    return this.fillWindow(window, offset, size, buf, n);
  }

  /** A reused buffer for a new read window, owned by `window` until `releaseWindows`. */
  private windowBuffer(seg: Segment, offset: number, size: number, window: ReadWindow, readAhead: number): Buffer {
    // Reused memory: a fresh buffer of tens or hundreds of KiB per read costs more in page faults than the read.
    const buf = acquirePullBody(this.windowLength(seg, offset, size, window, readAhead));
    (window.slots ??= []).push(buf);
    return buf;
  }

  /** Synchronous variant of `read` for lookups (recovery, offset-by-time). */
  readSync(offset: number, size: number): Buffer | null {
    const cached = this.cache.get(offset, size);
    if (cached) return cached;
    if (size <= 0 || offset + size > this.writePos) return null;
    const seg = this.segmentAt(offset);
    if (!seg) return null;
    const out = Buffer.allocUnsafe(size);
    const n = fs.readSync(seg.fd, out, 0, size, offset - seg.start);
    return n === size ? out : null;
  }

  /** The segment holding `offset`, or null when it was deleted (or never written). */
  segmentAt(offset: number): Segment | null {
    const first = this.segments[0];
    if (!first || offset < first.start) return null;
    const s = this.segments[Math.floor((offset - first.start) / this.o.fileSize)];
    return s && offset >= s.start && offset < s.start + this.o.fileSize ? s : null;
  }

  /**
   * Deletes segments last modified before `now - reservedMs`, oldest first, stopping at the first one
   * that is still young, being read, or the one being written. Returns how many were deleted.
   * RocketMQ: CleanCommitLogService / MappedFileQueue.deleteExpiredFileByTime.
   */
  async deleteExpired(now: number, reservedMs: number, maxFiles = Infinity): Promise<number> {
    await this.flush();
    let deleted = 0;
    while (this.segments.length > 1 && deleted < maxFiles) {
      const seg = this.segments[0] as Segment;
      if (seg.readers > 0) break;
      const next = this.segments[1] as Segment;
      if (next.start > this.flushed) break; // never a segment with unflushed bytes
      const mtime = fs.fstatSync(seg.fd).mtimeMs;
      if (mtime + reservedMs > now) break;
      fs.closeSync(seg.fd);
      fs.rmSync(seg.path, { force: true });
      this.segments.shift();
      this.cache.evictBelow(seg.start + this.o.fileSize);
      this.o.logger.info({ file: seg.path }, 'commit log: expired segment deleted');
      deleted++;
    }
    return deleted;
  }

  /** Waits for writes and a final flush, then closes every descriptor. */
  async close(): Promise<void> {
    while (this.syncing.size > 0 || this.scheduled || this.pending.length > 0) {
      if (this.syncing.size > 0) await Promise.allSettled(this.syncing.toArray());
      else await new Promise<void>((r) => setImmediate(r));
    }
    await this.flush();
    // Let reads in flight finish before their descriptors close (bounded: ~1 s).
    for (let i = 0; i < 1000 && this.segments.some((s) => s.readers > 0); i++) {
      await new Promise<void>((r) => void this.o.setTimeout(r, 1));
    }
    this.minAtClose = this.minOffset;
    this.closed = true;
    this.stopPrefault();
    for (const s of this.segments.splice(0)) fs.closeSync(s.fd);
    this.cache.clear();
  }

  private stopPrefault(): void {
    this.cancelPrefault?.();
    this.cancelPrefault = null;
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

function fdatasync(fd: number): Promise<void> {
  return new Promise((resolve, reject) => fs.fdatasync(fd, (err) => (err ? reject(err) : resolve())));
}

/**
 * Refuses a commit log whose segment files do not fit `fileSize` (the store was written with another
 * mappedFileSizeCommitLog) or that misses a segment between two others. Nothing is deleted: RocketMQ
 * refuses to load such a log too, and deleting would lose the data of every later segment.
 */
function checkSegmentLayout(
  dir: string,
  found: { name: string; start: number; bytes: number }[],
  fileSize: number,
): void {
  for (const f of found) {
    if (f.start % fileSize !== 0 || f.bytes > fileSize) {
      throw new StoreLayoutError(
        'mappedFileSizeCommitLog',
        `commit log segment ${path.join(dir, f.name)} (${f.bytes} bytes) does not fit mappedFileSizeCommitLog = ${fileSize}: ` +
          'the store was written with another segment size; open it with that size',
      );
    }
  }
  for (let i = 1; i < found.length; i++) {
    const prev = found[i - 1] as { start: number; name: string };
    const cur = found[i] as { start: number; name: string };
    if (prev.start + fileSize !== cur.start) {
      const missing: string[] = [];
      for (let at = prev.start + fileSize; at < cur.start && missing.length < 5; at += fileSize) {
        missing.push(offsetToFileName(at));
      }
      throw new StoreLayoutError(
        'mappedFileSizeCommitLog',
        `commit log segment ${missing.join(', ')}${missing.length === 5 ? ', ...' : ''} missing between ${prev.name} and ${cur.name} in ${dir}: ` +
          'restore it (or move the later segments away); nothing was deleted',
      );
    }
  }
}
