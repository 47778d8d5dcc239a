/**
 * The segment files of the CommitLog (RocketMQ: MappedFileQueue): one file per `fileSize` bytes of
 * the log, named by its 20-digit start offset, and the state the CommitLog's parts (appends, reads,
 * recovery) share. A segment is a plain file read and written with positional calls, not a mapping.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { ReadCache } from './read-cache.js';
import { StoreLayoutError } from './store-files.js';
import { fileNameToOffset, offsetToFileName } from './layout.js';

export interface Segment {
  start: number;
  path: string;
  fd: number;
  /** Reads in flight on this segment: retention never deletes a segment being read. */
  readers: number;
}

/** What the parts of one CommitLog share: its segments, its read cache and where writing stands. */
export interface LogState {
  readonly dir: string;
  readonly fileSize: number;
  /** Open segments, oldest first, each `fileSize` after the one before. */
  readonly segments: Segment[];
  readonly cache: ReadCache;
  /** Offset where the next record goes: every byte below it is in the file. */
  writePos: number;
  /** Every byte below this offset is fdatasynced. */
  flushed: number;
  closed: boolean;
}

/** The segment holding `offset`, or null when it was deleted (or never written). */
export function segmentAt(s: LogState, offset: number): Segment | null {
  const first = s.segments[0];
  if (!first || offset < first.start) return null;
  const seg = s.segments[Math.floor((offset - first.start) / s.fileSize)];
  return seg && offset >= seg.start && offset < seg.start + s.fileSize ? seg : null;
}

/** The segment files in `dir` (names that are not segment names ignored), oldest first. */
function listSegmentFiles(dir: string): { name: string; start: number }[] {
  return fs
    .readdirSync(dir)
    .map((name) => ({ name, start: fileNameToOffset(name) }))
    .filter((e): e is { name: string; start: number } => e.start !== null)
    .sort((a, b) => a.start - b.start);
}

/**
 * Opens every segment file of `dir` (creating the directory), after checking they fit `fileSize`
 * and follow each other without a gap.
 */
export function openSegments(dir: string, fileSize: number): Segment[] {
  fs.mkdirSync(dir, { recursive: true });
  const found = listSegmentFiles(dir);
  checkSegmentLayout(
    dir,
    found.map(({ name, start }) => ({ name, start, bytes: fs.statSync(path.join(dir, name)).size })),
    fileSize,
  );
  return found.map(({ name, start }) => {
    const p = path.join(dir, name);
    return { start, path: p, fd: fs.openSync(p, 'r+'), readers: 0 };
  });
}

/** Where the segment files in `dir` start and (at most) end, without opening them. */
export function peekSegmentBounds(dir: string): { min: number; end: number } {
  if (!fs.existsSync(dir)) return { min: 0, end: 0 };
  const found = listSegmentFiles(dir);
  const first = found[0];
  const last = found.at(-1);
  if (!first || !last) return { min: 0, end: 0 };
  return { min: first.start, end: last.start + fs.statSync(path.join(dir, last.name)).size };
}

/** Creates the segment starting at `start` (empty) and opens it. */
export function createSegment(dir: string, start: number): Segment {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, offsetToFileName(start));
  return { start, path: p, fd: fs.openSync(p, 'w+'), readers: 0 };
}

/** Closes a segment's descriptor and deletes its file. */
export function removeSegmentFile(seg: Segment): void {
  fs.closeSync(seg.fd);
  fs.rmSync(seg.path, { force: true });
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
