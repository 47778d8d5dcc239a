/**
 * ConsumeQueue: the index of one topic-queue. Unit i (20 bytes: commit-log offset long, size int,
 * tags code long) sits at byte i*20; files hold `unitsPerFile` units and are named by their start
 * byte offset (consumequeue/<topic>/<queueId>/<20 digits>). The units of the newest file are kept in
 * memory for reads; units reach the file when the store flushes (a crash loses nothing: recovery
 * re-dispatches them from the commit log). RocketMQ: ConsumeQueue.java.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../common/logger.js';
import { CQ_FILLER_SIZE, CQ_UNIT_SIZE, fileNameToOffset, offsetToFileName } from './layout.js';
import type { OpenFile, OpenFiles } from './open-files.js';
import { StoreLayoutError } from './store-files.js';

interface CqFile extends OpenFile {
  /** Queue offset of the file's first unit. */
  start: number;
  /** Units of this file present (in memory or on disk). */
  units: number;
  /** Units already written to the file. */
  written: number;
  /** Units held in memory: always for the newest file, and for older files until written. */
  data: Buffer | null;
  /** Whether bytes were written since the last fsync. */
  dirty: boolean;
}

export interface CqUnit {
  offsetPy: number;
  size: number;
  tagsCode: number;
}

export class ConsumeQueue {
  readonly dir: string;
  private readonly files: CqFile[] = [];
  private min = 0;
  /** Closed with the store: a pull still in flight must not open its files again. */
  private closed = false;
  /** End (offset + size) of the last unit in the commit log; 0 when empty. */
  maxPhysicOffset = 0;

  constructor(
    readonly topic: string,
    readonly queueId: number,
    rootDir: string,
    readonly unitsPerFile: number,
    private readonly logger: Logger,
    /** The store's bounded set of open descriptors: a queue file is opened on demand. */
    private readonly openFiles: OpenFiles,
  ) {
    this.dir = path.join(rootDir, topic, String(queueId));
  }

  get minOffset(): number {
    return this.min;
  }

  /** One past the last unit (0 when the queue is empty). */
  get maxOffset(): number {
    const last = this.files.at(-1);
    return last ? last.start + last.units : 0;
  }

  get fileCount(): number {
    return this.files.length;
  }

  /** Loads the files on disk (recovery): trims a torn unit, keeps the newest file's units in memory. */
  load(): void {
    if (!fs.existsSync(this.dir)) return;
    const fileBytes = this.unitsPerFile * CQ_UNIT_SIZE;
    const names = fs
      .readdirSync(this.dir)
      .map((n) => ({ n, off: fileNameToOffset(n) }))
      .filter((e): e is { n: string; off: number } => e.off !== null)
      .sort((a, b) => a.off - b.off);
    for (const { n, off } of names) {
      const bytes = fs.statSync(path.join(this.dir, n)).size;
      if (off % fileBytes !== 0 || bytes > fileBytes) {
        throw new StoreLayoutError(
          'mappedFileSizeConsumeQueue',
          `consume-queue file ${path.join(this.dir, n)} (${bytes} bytes) does not fit mappedFileSizeConsumeQueue = ${fileBytes}: ` +
            'the store was written with another consume-queue file size; open it with that size',
        );
      }
    }
    for (const { n, off } of names) {
      const p = path.join(this.dir, n);
      let size = fs.statSync(p).size;
      if (size > fileBytes) size = fileBytes;
      const whole = Math.floor(size / CQ_UNIT_SIZE);
      if (whole * CQ_UNIT_SIZE !== fs.statSync(p).size) {
        this.logger.warn({ file: p, size, keptUnits: whole }, 'consume queue: torn unit cut');
        fs.truncateSync(p, whole * CQ_UNIT_SIZE);
      }
      const last = this.files.at(-1);
      if (last && (last.units !== this.unitsPerFile || last.start + this.unitsPerFile !== off / CQ_UNIT_SIZE)) {
        // A gap or a short file before this one: keep the files up to the gap, drop the rest.
        this.logger.warn(
          { file: p, topic: this.topic, queueId: this.queueId, units: whole },
          'consume queue: file after a gap dropped; its units are rebuilt from the commit log',
        );
        fs.rmSync(p, { force: true });
        continue;
      }
      this.files.push({
        start: off / CQ_UNIT_SIZE,
        path: p,
        units: whole,
        written: whole,
        fd: null,
        pins: 0,
        data: null,
        dirty: false,
      });
    }
    while (this.files.length > 0 && this.files.at(-1)?.units === 0 && this.files.length > 1) {
      const f = this.files.pop();
      if (f) fs.rmSync(f.path, { force: true });
    }
    const last = this.files.at(-1);
    if (last) last.data = this.readWholeFile(last);
    this.min = this.files[0]?.start ?? 0;
    this.skipFillersAtHead();
    this.maxPhysicOffset = this.computeMaxPhysicOffset();
  }

  /**
   * Checks every unit against the shape of the commit log (recovery): units name records in increasing
   * order that do not overlap, of a plausible size, inside the log. The queue is cut at the first unit
   * that does not, so the dispatch from the commit log rebuilds it and what follows. Returns the units cut.
   */
  validate(commitLogMin: number, commitLogEnd: number, maxRecordSize: number, minRecordSize: number): number {
    const max = this.maxOffset;
    let prevEnd = -1;
    /** Queue offset of the unit that set `prevEnd`. */
    let prevAt = -1;
    let firstPastEnd: number | null = null;
    for (const f of this.files) {
      const from = Math.max(f.start, this.min);
      const units = from < f.start + f.units ? this.readUnits(from, f.units) : null;
      if (!units) continue;
      const count = Math.floor(units.length / CQ_UNIT_SIZE);
      for (let i = 0; i < count; i++) {
        const at = i * CQ_UNIT_SIZE;
        const offsetPy = units.readUInt32BE(at) * 0x1_0000_0000 + units.readUInt32BE(at + 4);
        const size = units.readInt32BE(at + 8);
        if (size === CQ_FILLER_SIZE && offsetPy === 0) continue;
        const below = offsetPy < commitLogMin; // its segment expired: retention moves past it
        const pastEnd = offsetPy + size > commitLogEnd;
        const badSize = size < minRecordSize || size > maxRecordSize;
        const bad = !below && (badSize || offsetPy < prevEnd);
        // Units past the end of the log at the queue's end (a log cut short) are cut once the log is
        // recovered; one followed by a unit inside the log is damaged.
        if (!bad && pastEnd) {
          firstPastEnd ??= from + i;
          continue;
        }
        if (bad || firstPastEnd !== null) {
          // A unit overlapping the one before: either may be the damaged one (a flipped high bit moves
          // a unit past its successors), so the queue is cut before the earlier and rebuilt from there.
          const overlap = !badSize && offsetPy < prevEnd && prevAt >= 0;
          const queueOffset = firstPastEnd ?? (overlap ? prevAt : from + i);
          this.truncateTo(queueOffset);
          this.maxPhysicOffset = this.computeMaxPhysicOffset();
          return max - queueOffset;
        }
        if (!below) {
          prevEnd = offsetPy + size;
          prevAt = from + i;
        }
      }
    }
    return 0;
  }

  /** Removes units pointing at or past `commitLogEnd` (recovery after the commit log was cut). */
  truncateDirty(commitLogEnd: number): number {
    const max = this.maxOffset;
    let keep = max;
    while (keep > this.min) {
      const u = this.unit(keep - 1);
      if (u && u.size !== CQ_FILLER_SIZE && u.offsetPy + u.size <= commitLogEnd) break;
      keep--;
    }
    if (keep < max) this.truncateTo(keep);
    if (this.maxOffset <= this.min) this.min = this.maxOffset;
    this.maxPhysicOffset = this.computeMaxPhysicOffset();
    return max - keep;
  }

  /**
   * Puts the unit of queue offset `queueOffset` (dispatch). An offset already present is ignored
   * (re-dispatch during recovery); a gap is filled with filler units.
   */
  putUnit(queueOffset: number, offsetPy: number, size: number, tagsCode: number): boolean {
    let max = this.maxOffset;
    if (queueOffset < max) {
      // Re-dispatch during recovery: the unit is already there, unless it names another record.
      const u = queueOffset >= this.min ? this.unit(queueOffset) : null;
      if (!u || u.offsetPy === offsetPy) return false;
      this.logger.warn(
        { topic: this.topic, queueId: this.queueId, queueOffset },
        'consume queue: stale units replaced',
      );
      this.truncateTo(queueOffset);
      max = this.maxOffset;
    }
    if (queueOffset > max) {
      if (this.files.length === 0 || max === this.min) {
        // RocketMQ: a queue whose first file starts past 0 is pre-filled with filler units.
        for (const f of this.files.splice(0)) {
          this.closeFile(f);
          fs.rmSync(f.path, { force: true });
        }
        this.openNewFile(queueOffset - (queueOffset % this.unitsPerFile));
        this.min = queueOffset;
      } else {
        this.logger.warn({ topic: this.topic, queueId: this.queueId, from: max, to: queueOffset }, 'consume queue gap');
      }
      max = this.maxOffset;
      for (; max < queueOffset; max++) this.appendUnit(0, CQ_FILLER_SIZE, 0);
    }
    this.appendUnit(offsetPy, size, tagsCode);
    this.maxPhysicOffset = offsetPy + size;
    return true;
  }

  /** The unit at a queue offset, or null when no file holds it. */
  unit(queueOffset: number): CqUnit | null {
    const buf = this.readUnits(queueOffset, 1);
    if (!buf || buf.length < CQ_UNIT_SIZE) return null;
    return {
      offsetPy: buf.readUInt32BE(0) * 0x1_0000_0000 + buf.readUInt32BE(4),
      size: buf.readInt32BE(8),
      tagsCode: buf.readInt32BE(12) * 0x1_0000_0000 + buf.readUInt32BE(16),
    };
  }

  /**
   * Units from `from` to the end of its file (at most `maxUnits`), or null when no file holds `from`
   * (RocketMQ: iterateFrom / getIndexBuffer).
   */
  readUnits(from: number, maxUnits: number): Buffer | null {
    if (from < this.min || from >= this.maxOffset) return null;
    const f = this.fileOf(from);
    if (!f) return null;
    const first = from - f.start;
    const count = Math.min(maxUnits, f.units - first);
    if (count <= 0) return null;
    if (f.data) return f.data.subarray(first * CQ_UNIT_SIZE, (first + count) * CQ_UNIT_SIZE);
    if (this.closed) return null;
    const out = Buffer.allocUnsafe(count * CQ_UNIT_SIZE);
    const fd = this.fdOf(f);
    const n = fs.readSync(fd, out, 0, out.length, first * CQ_UNIT_SIZE);
    return n === out.length ? out : out.subarray(0, n - (n % CQ_UNIT_SIZE));
  }

  /**
   * `readUnits` when the units are held in memory (the newest file, or units not yet written), else
   * undefined: they are in a file, for `readUnitsFromFile`.
   */
  readUnitsInMemory(from: number, maxUnits: number): Buffer | null | undefined {
    if (from < this.min || from >= this.maxOffset) return null;
    const f = this.fileOf(from);
    if (!f) return null;
    return f.data ? this.readUnits(from, maxUnits) : undefined;
  }

  /**
   * `readUnits` from the file, off the event loop: the descriptor stays open while the read is in flight
   * (a file deleted by retention meanwhile is read to the end of this read, then closed).
   */
  async readUnitsFromFile(from: number, maxUnits: number): Promise<Buffer | null> {
    const f = !this.closed && from >= this.min && from < this.maxOffset ? this.fileOf(from) : null;
    if (!f) return null;
    if (f.data) return this.readUnits(from, maxUnits);
    const first = from - f.start;
    const count = Math.min(maxUnits, f.units - first);
    if (count <= 0) return null;
    const out = Buffer.allocUnsafe(count * CQ_UNIT_SIZE);
    const n = await this.openFiles.withFd(
      f,
      (fd) =>
        new Promise<number>((resolve, reject) =>
          fs.read(fd, out, 0, out.length, first * CQ_UNIT_SIZE, (e, bytes) => (e ? reject(e) : resolve(bytes))),
        ),
    );
    return n === out.length ? out : out.subarray(0, n - (n % CQ_UNIT_SIZE));
  }

  /**
   * Writes units held in memory to their files; returns the files that need an fsync (their
   * descriptors may be closed by then: `OpenFiles.withFd` reopens them).
   */
  writePending(): OpenFile[] {
    const toSync: OpenFile[] = [];
    const newest = this.files.at(-1);
    for (const f of this.files) {
      if (f.data && f.written < f.units) {
        const fd = this.fdOf(f);
        const from = f.written * CQ_UNIT_SIZE;
        const to = f.units * CQ_UNIT_SIZE;
        let done = 0;
        while (done < to - from) done += fs.writeSync(fd, f.data, from + done, to - from - done, from + done);
        f.written = f.units;
        f.dirty = true;
      }
      if (f !== newest && f.written === f.units) f.data = null;
      if (f.dirty) {
        toSync.push(f);
        f.dirty = false;
      }
    }
    return toSync;
  }

  /**
   * Moves the min offset to the first unit whose commit-log offset is still present and deletes whole
   * files below it (never the newest). RocketMQ: ConsumeQueue.deleteExpiredFile + correctMinOffset.
   */
  correctMinOffset(commitLogMinOffset: number): number {
    let deleted = 0;
    while (this.files.length > 1) {
      const f = this.files[0];
      const lastUnit = f ? this.unit(f.start + f.units - 1) : null;
      if (!f || !lastUnit || lastUnit.offsetPy >= commitLogMinOffset) break;
      this.closeFile(f);
      fs.rmSync(f.path, { force: true });
      this.files.shift();
      deleted++;
    }
    const first = this.files[0];
    if (!first) return deleted;
    // Units name records in increasing commit-log order: binary search for the first one still present
    // (filler units, which name no record, count as gone). One unit read per step, not one per unit:
    // a linear walk over 400k units blocked the event loop for seconds.
    let lo = Math.max(this.min, first.start);
    let hi = this.maxOffset;
    const present = (q: number): boolean => {
      const u = this.unit(q);
      return u !== null && u.size !== CQ_FILLER_SIZE && u.offsetPy >= commitLogMinOffset;
    };
    if (lo < hi && !present(lo)) {
      while (lo < hi) {
        const mid = lo + Math.floor((hi - lo) / 2);
        if (present(mid)) hi = mid;
        else lo = mid + 1;
      }
    }
    this.min = lo;
    return deleted;
  }

  /** Closes every descriptor (the caller has waited for pending fsyncs); later file reads find nothing. */
  close(): void {
    this.closed = true;
    for (const f of this.files) this.closeFile(f);
  }

  /** Deletes every file of this queue (the caller drops the queue). */
  destroy(): void {
    this.close();
    fs.rmSync(this.dir, { recursive: true, force: true });
    this.files.length = 0;
    this.min = 0;
  }

  private appendUnit(offsetPy: number, size: number, tagsCode: number): void {
    let f = this.files.at(-1);
    if (!f || f.units >= this.unitsPerFile) f = this.openNewFile(f ? f.start + this.unitsPerFile : 0);
    let data = f.data;
    const at = f.units * CQ_UNIT_SIZE;
    if (!data || data.length < at + CQ_UNIT_SIZE) {
      const grown = Buffer.allocUnsafe(Math.min(this.unitsPerFile * CQ_UNIT_SIZE, Math.max(4096, at * 2)));
      if (data) data.copy(grown, 0, 0, at);
      f.data = data = grown;
    }
    writeUnit(data, at, offsetPy, size, tagsCode);
    f.units++;
  }

  /**
   * Rewrites the unit at `queueOffset` (a damaged unit rebuilt from the commit log), in memory and in
   * its file when already written there. False when no file holds that offset.
   */
  replaceUnit(queueOffset: number, offsetPy: number, size: number, tagsCode: number): boolean {
    if (queueOffset < this.min) return false;
    const f = this.fileOf(queueOffset);
    if (!f) return false;
    const i = queueOffset - f.start;
    const unit = Buffer.allocUnsafe(CQ_UNIT_SIZE);
    writeUnit(unit, 0, offsetPy, size, tagsCode);
    if (f.data) unit.copy(f.data, i * CQ_UNIT_SIZE);
    if (i < f.written) {
      fs.writeSync(this.fdOf(f), unit, 0, CQ_UNIT_SIZE, i * CQ_UNIT_SIZE);
      f.dirty = true;
    }
    if (queueOffset === this.maxOffset - 1) this.maxPhysicOffset = offsetPy + size;
    return true;
  }

  private openNewFile(start: number): CqFile {
    const f: CqFile = {
      start,
      path: path.join(this.dir, offsetToFileName(start * CQ_UNIT_SIZE)),
      units: 0,
      written: 0,
      fd: null,
      pins: 0,
      data: null,
      dirty: false,
    };
    this.files.push(f);
    return f;
  }

  private fileOf(queueOffset: number): CqFile | null {
    const first = this.files[0];
    if (!first) return null;
    const idx = Math.floor((queueOffset - first.start) / this.unitsPerFile);
    const f = this.files[idx];
    return f && queueOffset >= f.start && queueOffset < f.start + f.units ? f : null;
  }

  private fdOf(f: CqFile): number {
    return this.openFiles.fd(f);
  }

  private closeFile(f: CqFile): void {
    this.openFiles.close(f);
  }

  private readWholeFile(f: CqFile): Buffer {
    const cap = Math.min(this.unitsPerFile * CQ_UNIT_SIZE, Math.max(4096, f.units * CQ_UNIT_SIZE * 2));
    const buf = Buffer.allocUnsafe(cap);
    if (f.units > 0) fs.readSync(this.fdOf(f), buf, 0, f.units * CQ_UNIT_SIZE, 0);
    return buf;
  }

  private truncateTo(queueOffset: number): void {
    for (;;) {
      const f = this.files.at(-1);
      if (!f) return;
      if (queueOffset > f.start || this.files.length === 1) {
        const keep = Math.max(0, queueOffset - f.start);
        f.units = Math.min(f.units, keep);
        if (f.written > keep) {
          f.written = keep;
          fs.truncateSync(f.path, keep * CQ_UNIT_SIZE);
        }
        if (!f.data) f.data = this.readWholeFile(f);
        return;
      }
      this.closeFile(f);
      fs.rmSync(f.path, { force: true });
      this.files.pop();
      const prev = this.files.at(-1);
      if (prev && !prev.data) prev.data = this.readWholeFile(prev);
    }
  }

  private skipFillersAtHead(): void {
    const max = this.maxOffset;
    while (this.min < max && this.unit(this.min)?.size === CQ_FILLER_SIZE) this.min++;
  }

  private computeMaxPhysicOffset(): number {
    const max = this.maxOffset;
    if (max <= this.min) return 0;
    const u = this.unit(max - 1);
    return u && u.size !== CQ_FILLER_SIZE ? u.offsetPy + u.size : 0;
  }
}

function writeUnit(b: Buffer, at: number, offsetPy: number, size: number, tagsCode: number): void {
  b.writeUInt32BE(Math.floor(offsetPy / 0x1_0000_0000), at);
  b.writeUInt32BE(offsetPy >>> 0, at + 4);
  b.writeInt32BE(size, at + 8);
  b.writeInt32BE(Math.floor(tagsCode / 0x1_0000_0000), at + 12);
  b.writeUInt32BE(tagsCode >>> 0, at + 16);
}
