/**
 * CommitLog: the append-only log of stored records, cut into segments of `fileSize` bytes named by
 * their 20-digit start offset (commitlog/<offset>). A record never spans segments: when a record plus
 * the 8-byte filler does not fit, the filler `[int remaining][int BLANK_MAGIC]` closes the segment and
 * the record starts the next one (RocketMQ: CommitLog, MappedFileQueue).
 *
 * This class ties the parts together and holds retention: the segment files (commit-log-segments.ts),
 * the batched put path and flushes (commit-log-writer.ts), reads (commit-log-reads.ts) and recovery
 * (commit-log-recovery.ts). Recently written bytes stay in a bounded read cache; older ones are read
 * with positional reads.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { COMMITLOG_DIR, END_FILE_MIN_BLANK_LENGTH } from './layout.js';
import { ReadCache } from './read-cache.js';
import {
  openSegments,
  peekSegmentBounds,
  removeSegmentFile,
  segmentAt,
  type LogState,
  type Segment,
} from './commit-log-segments.js';
import { recoverLog, type OnRecord, type RecoveryReport } from './commit-log-recovery.js';
import {
  readRecord,
  readRecordSync,
  readWindow,
  readWindowSync,
  viewSync,
  type ReadWindow,
} from './commit-log-reads.js';
import { CommitLogWriter, type AppendRequest } from './commit-log-writer.js';

export { releaseWindows, type ReadWindow } from './commit-log-reads.js';
export type { AppendRequest } from './commit-log-writer.js';
export type { RecoveryReport } from './commit-log-recovery.js';

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

export class CommitLog {
  readonly dir: string;
  private readonly s: LogState;
  private readonly writer: CommitLogWriter;
  private minAtClose = 0;

  constructor(
    storePath: string,
    private readonly o: CommitLogOptions,
  ) {
    this.dir = path.join(storePath, COMMITLOG_DIR);
    this.s = {
      dir: this.dir,
      fileSize: o.fileSize,
      segments: [],
      cache: new ReadCache(o.readCacheSizeBytes),
      writePos: 0,
      flushed: 0,
      closed: false,
    };
    this.writer = new CommitLogWriter(this.s, o);
  }

  get fileSize(): number {
    return this.o.fileSize;
  }
  /** Offset of the first byte still present (start of the oldest segment). */
  get minOffset(): number {
    return this.s.closed ? this.minAtClose : (this.s.segments[0]?.start ?? this.s.writePos);
  }
  /** Offset where the next record goes. */
  get maxOffset(): number {
    return this.s.writePos;
  }
  get flushedOffset(): number {
    return this.s.flushed;
  }
  get segmentCount(): number {
    return this.s.segments.length;
  }
  /** Largest record a segment can hold (room for the filler after it). */
  get maxRecordSize(): number {
    return this.o.fileSize - END_FILE_MIN_BLANK_LENGTH;
  }

  /**
   * Opens the segments and verifies the log from `scanFrom` (clamped to a segment start) to its end,
   * record by record (size, magic, CRC, own offset). A torn or corrupt tail is cut off: the segment is
   * truncated and every later segment deleted. `onRecord` sees each valid record at or after
   * `dispatchFrom`, in order (for re-dispatch).
   */
  recover(scanFrom: number, tailSegments: number, dispatchFrom: number, onRecord: OnRecord): RecoveryReport {
    const s = this.s;
    s.segments.push(...openSegments(this.dir, this.o.fileSize));
    const empty = s.segments.length === 0;
    const report = recoverLog(s, this.o, scanFrom, tailSegments, dispatchFrom, onRecord);
    s.writePos = report.validEnd;
    if (!empty) s.cache.startAt(report.validEnd);
    // The bytes below where the scan started were fsynced in an earlier run (the checkpoint says so).
    s.flushed = Math.min(report.scannedFrom, report.validEnd);
    this.writer.startAtWritePos();
    return report;
  }

  /** Where the segment files on disk start and (at most) end, before recovery opens them. */
  peekBounds(): { min: number; end: number } {
    return peekSegmentBounds(this.dir);
  }

  /** Closes every descriptor at once (a failed open). */
  closeNow(): void {
    this.s.closed = true;
    this.writer.stopPrefault();
    for (const seg of this.s.segments.splice(0)) fs.closeSync(seg.fd);
    this.s.cache.clear();
  }

  /** Queues an append: written with every other append of this event-loop turn (see CommitLogWriter). */
  append(req: AppendRequest): void {
    this.writer.append(req);
  }

  /** fdatasyncs every segment holding unflushed bytes; concurrent callers share one flush. */
  flush(): Promise<void> {
    return this.writer.flush();
  }

  /** Whether the bytes are in the read cache. */
  isCached(offset: number, size: number): boolean {
    return this.s.cache.has(offset, size);
  }

  /** The cached bytes of a record (a copy), or undefined when they are not in the read cache. */
  readCached(offset: number, size: number): Buffer | undefined {
    return this.s.cache.get(offset, size);
  }

  /** A view of a record's bytes in the read cache (valid until the ring wraps past it), or undefined. */
  ringView(offset: number, size: number): Buffer | undefined {
    return this.s.cache.view(offset, size);
  }

  /** The record's bytes, from the cache or the file; null when its segment is gone or out of range. */
  read(offset: number, size: number): Promise<Buffer | null> {
    return readRecord(this.s, offset, size);
  }

  /** Synchronous variant of `read` for lookups (recovery, offset-by-time). */
  readSync(offset: number, size: number): Buffer | null {
    return readRecordSync(this.s, offset, size);
  }

  /** A view of a record's bytes for a synchronous reader, reading ahead into `window` (see commit-log-reads.ts). */
  viewSync(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Buffer | null {
    return viewSync(this.s, offset, size, window, readAheadBytes);
  }

  /** Reads a record not in the ring into a new read window, off the event loop (see commit-log-reads.ts). */
  readWindow(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Promise<Buffer | null> {
    return readWindow(this.s, offset, size, window, readAheadBytes);
  }

  /** `readWindow` on the event loop, for a record the page cache is taken to hold. */
  readWindowSync(offset: number, size: number, window: ReadWindow, readAheadBytes: number): Buffer | null {
    return readWindowSync(this.s, offset, size, window, readAheadBytes);
  }

  /** The segment holding `offset`, or null when it was deleted (or never written). */
  segmentAt(offset: number): Segment | null {
    return segmentAt(this.s, offset);
  }

  /**
   * Deletes segments last modified before `now - reservedMs`, oldest first, stopping at the first one
   * that is still young, being read, or the one being written. Returns how many were deleted.
   * RocketMQ: CleanCommitLogService / MappedFileQueue.deleteExpiredFileByTime.
   */
  async deleteExpired(now: number, reservedMs: number, maxFiles = Infinity): Promise<number> {
    await this.flush();
    const s = this.s;
    let deleted = 0;
    while (s.segments.length > 1 && deleted < maxFiles) {
      const seg = s.segments[0] as Segment;
      if (seg.readers > 0) break;
      const next = s.segments[1] as Segment;
      if (next.start > s.flushed) break; // never a segment with unflushed bytes
      const mtime = fs.fstatSync(seg.fd).mtimeMs;
      if (mtime + reservedMs > now) break;
      removeSegmentFile(seg);
      s.segments.shift();
      s.cache.evictBelow(seg.start + this.o.fileSize);
      this.o.logger.info({ file: seg.path }, 'commit log: expired segment deleted');
      deleted++;
    }
    return deleted;
  }

  /** Waits for writes and a final flush, then closes every descriptor. */
  async close(): Promise<void> {
    await this.writer.drain();
    await this.flush();
    // Let reads in flight finish before their descriptors close (bounded: ~1 s).
    for (let i = 0; i < 1000 && this.s.segments.some((seg) => seg.readers > 0); i++) {
      await new Promise<void>((r) => void this.o.setTimeout(r, 1));
    }
    this.minAtClose = this.minOffset;
    this.closeNow();
  }
}
