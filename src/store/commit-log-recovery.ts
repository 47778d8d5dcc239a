/**
 * CommitLog recovery (RocketMQ: CommitLog.recoverNormally / recoverAbnormally): verifies the log
 * record by record from a start point to its end, skips damaged records inside the log, and cuts a
 * torn or corrupt tail off. Runs once, on open, before any append.
 */
import fs from 'node:fs';
import type { Logger } from '../common/logger.js';
import { BLANK_MAGIC_CODE, MAGIC_CODE_V1, MAGIC_CODE_V2, checkRecord } from '../common/codec/index.js';
import { StoreLayoutError } from './store-files.js';
import { removeSegmentFile, segmentAt, type LogState, type Segment } from './commit-log-segments.js';

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

export interface RecoveryOptions {
  logger: Logger;
  /**
   * Why a record that passed the size, magic and CRC checks is still not valid (its header is not
   * self-consistent), or null. Recovery skips such a record like any damaged one.
   */
  recordProblem?: (record: Buffer, offset: number) => string | null;
}

/** Sees each valid record at or after the dispatch offset, in order: `buf[at..]` is the record at `offset`. */
export type OnRecord = (buf: Buffer, at: number, offset: number) => void;

/**
 * Verifies the open segments of `s` from `scanFrom` (clamped to a segment start, and to the start of
 * the last `tailSegments` segments) to the end of the log. A torn or corrupt tail is cut off: the
 * segment is truncated and every later segment deleted. `onRecord` sees each valid record at or after
 * `dispatchFrom`, in order (for re-dispatch).
 */
export function recoverLog(
  s: LogState,
  o: RecoveryOptions,
  scanFrom: number,
  tailSegments: number,
  dispatchFrom: number,
  onRecord: OnRecord,
): RecoveryReport {
  const size = s.fileSize;
  const first = s.segments[0];
  const last = s.segments.at(-1);
  if (!first || !last) {
    return { scannedFrom: 0, validEnd: 0, droppedBytes: 0, reason: null, skippedRecords: 0, skippedBytes: 0 };
  }
  let from = Math.max(scanFrom, first.start);
  if (tailSegments > 0) from = Math.min(from, (s.segments.at(-tailSegments) ?? first).start);
  const seg = segmentAt(s, from);
  // A start past the data (a checkpoint ahead of a shortened file): verify the whole last segment.
  if (!seg || from - seg.start > fs.fstatSync(seg.fd).size)
    from = Math.min(last.start, Math.max(from - (from % size), first.start));
  return scan(s, o, from, dispatchFrom, onRecord);
}

/**
 * Verifies records from `from` to the end of the log. A damaged record or range inside the log (one
 * followed by a valid record of the same segment, or by later segments) is skipped and logged, never
 * a reason to cut what follows: records state their own offset, so the next valid one is found by
 * searching for a record that names the position it sits at. Only a damaged tail is cut.
 */
function scan(s: LogState, o: RecoveryOptions, from: number, dispatchFrom: number, onRecord: OnRecord): RecoveryReport {
  const size = s.fileSize;
  let buf = Buffer.allocUnsafe(Math.min(size, 16 * 1024 * 1024));
  const startIdx = s.segments.findIndex((seg) => from >= seg.start && from < seg.start + size);
  let skippedRecords = 0;
  let skippedBytes = 0;
  const logSkipped = (): void => {
    if (skippedRecords > 0) {
      o.logger.warn({ skippedRanges: skippedRecords, skippedBytes }, 'commit log: damaged records skipped');
    }
  };
  for (let idx = startIdx; idx < s.segments.length; idx++) {
    const seg = s.segments[idx] as Segment;
    const isLast = idx === s.segments.length - 1;
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
        const problem = o.recordProblem?.(view.subarray(p, p + c.size), offset) ?? null;
        if (problem !== null) {
          damage = `record at ${offset}: ${problem}`;
          break;
        }
        if (offset >= dispatchFrom) onRecord(view, p, offset);
        p += c.size;
      }
      filePos += p;
      if (damage === null) continue;
      const resume = findNextRecord(s, o, seg, filePos + 1, fileLen);
      if (resume === null && isLast) {
        logSkipped();
        return cut(s, o, from, seg.start + filePos, damage, skippedRecords, skippedBytes);
      }
      const end = resume ?? fileLen;
      skippedRecords++;
      skippedBytes += end - filePos;
      o.logger.warn(
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
      o.logger.warn(
        { at: seg.start + filePos, segment: seg.path },
        'commit log: segment ends without its filler; later segments kept',
      );
      ended = true;
    }
    if (!ended) {
      logSkipped();
      return cut(s, o, from, seg.start + filePos, null, skippedRecords, skippedBytes);
    }
  }
  logSkipped();
  const last = s.segments.at(-1) as Segment;
  return {
    scannedFrom: from,
    validEnd: last.start + size,
    droppedBytes: 0,
    reason: null,
    skippedRecords,
    skippedBytes,
  };
}

/**
 * The file position of the first valid record (one that names its own offset, CRC included) or
 * segment-end filler at or after `filePos`, or null when there is none before `fileLen`.
 */
function findNextRecord(
  s: LogState,
  o: RecoveryOptions,
  seg: Segment,
  filePos: number,
  fileLen: number,
): number | null {
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
    for (const start of hits) if (isRecordStart(s, o, seg, start, fileLen)) return start;
  }
  return null;
}

/** Whether a valid record naming its own offset, or the segment-end filler, starts at `start`. */
function isRecordStart(s: LogState, o: RecoveryOptions, seg: Segment, start: number, fileLen: number): boolean {
  if (start < 0 || start + 8 > fileLen) return false;
  const head = Buffer.allocUnsafe(8);
  fs.readSync(seg.fd, head, 0, 8, start);
  const len = head.readInt32BE(0);
  if (head.readInt32BE(4) === BLANK_MAGIC_CODE) return start + len === s.fileSize;
  if (len < 8 || start + len > fileLen) return false;
  const rec = Buffer.allocUnsafe(len);
  if (fs.readSync(seg.fd, rec, 0, len, start) !== len || checkRecord(rec, 0).kind !== 'message') return false;
  if (rec.readUInt32BE(28) * 0x1_0000_0000 + rec.readUInt32BE(32) !== seg.start + start) return false;
  return (o.recordProblem?.(rec, seg.start + start) ?? null) === null;
}

/** Truncates the log at `pos` (inside segment of `pos`) and deletes every later segment. */
function cut(
  s: LogState,
  o: RecoveryOptions,
  from: number,
  pos: number,
  reason: string | null,
  skippedRecords: number,
  skippedBytes: number,
): RecoveryReport {
  const size = s.fileSize;
  let dropped = 0;
  const keepIdx = s.segments.findIndex((seg) => pos >= seg.start && pos < seg.start + size);
  for (let i = s.segments.length - 1; i > keepIdx; i--) {
    const seg = s.segments[i] as Segment;
    dropped += fs.fstatSync(seg.fd).size;
    removeSegmentFile(seg);
    s.segments.pop();
  }
  const seg = s.segments[keepIdx];
  if (seg) {
    const len = fs.fstatSync(seg.fd).size;
    if (len > pos - seg.start) {
      dropped += len - (pos - seg.start);
      fs.ftruncateSync(seg.fd, pos - seg.start);
    }
  }
  if (dropped > 0 || reason) {
    o.logger.warn({ at: pos, droppedBytes: dropped, reason }, 'commit log: torn or corrupt tail cut off');
  }
  return {
    scannedFrom: from,
    validEnd: pos,
    droppedBytes: dropped,
    reason: dropped > 0 ? reason : null,
    skippedRecords,
    skippedBytes,
  };
}
