/**
 * The pure getMessage decision (RocketMQ DefaultMessageStore.getMessage). Each row cites the
 * RocketMQ behaviour it checks; RocketMQ's source is the oracle.
 */
import {
  decideStart,
  estimateInMem,
  isTheBatchFull,
  maxFilterBytes,
  maxPullSize,
  nextOffsetCorrection,
  scanConsumeQueue,
  type ScanParams,
  type ScanResult,
} from '../../../src/store/get-message-rules.js';
import type { MessageFilter } from '../../../src/store/types.js';

const MASTER = { brokerRole: 'ASYNC_MASTER', offsetCheckInSlave: false } as const;
const SLAVE = { brokerRole: 'SLAVE', offsetCheckInSlave: false } as const;
const SLAVE_CHECKED = { brokerRole: 'SLAVE', offsetCheckInSlave: true } as const;
const CAPS = {
  maxTransferCountOnMessageInMemory: 32,
  maxTransferBytesOnMessageInMemory: 256 * 1024,
  maxTransferCountOnMessageInDisk: 8,
  maxTransferBytesOnMessageInDisk: 64 * 1024,
};

describe('decideStart (DefaultMessageStore.java:850-861, 981-984)', () => {
  test.each([
    // [why, offset, min, max, exists, status, next, scan]
    [
      'RocketMQ: unknown queue is NO_MATCHED_LOGIC_QUEUE, next corr(offset, 0)',
      7,
      0,
      0,
      false,
      'NO_MATCHED_LOGIC_QUEUE',
      0,
      false,
    ],
    ['RocketMQ: max == 0 is NO_MESSAGE_IN_QUEUE, next 0', 7, 0, 0, true, 'NO_MESSAGE_IN_QUEUE', 0, false],
    ['RocketMQ: max == 0 at offset 0', 0, 0, 0, true, 'NO_MESSAGE_IN_QUEUE', 0, false],
    ['RocketMQ: offset < min is OFFSET_TOO_SMALL, next = min', 3, 10, 20, true, 'OFFSET_TOO_SMALL', 10, false],
    [
      'RocketMQ: offset == max is OFFSET_OVERFLOW_ONE, next = offset',
      20,
      10,
      20,
      true,
      'OFFSET_OVERFLOW_ONE',
      20,
      false,
    ],
    [
      'RocketMQ: offset > max is OFFSET_OVERFLOW_BADLY, next = max (5.x, ISSUE #4215)',
      25,
      10,
      20,
      true,
      'OFFSET_OVERFLOW_BADLY',
      20,
      false,
    ],
    [
      'RocketMQ: offset > max with min 0 still resets to max in 5.x',
      25,
      0,
      20,
      true,
      'OFFSET_OVERFLOW_BADLY',
      20,
      false,
    ],
    ['RocketMQ: max == 0 wins over offset < min', -1, 0, 0, true, 'NO_MESSAGE_IN_QUEUE', 0, false],
    ['inside [min, max): scan, starting as NO_MATCHED_MESSAGE', 12, 10, 20, true, 'NO_MATCHED_MESSAGE', 12, true],
    ['offset == min: scan', 10, 10, 20, true, 'NO_MATCHED_MESSAGE', 10, true],
  ] as const)('%s', (_why, offset, min, max, exists, status, next, scan) => {
    expect(decideStart(offset, min, max, exists, MASTER)).toEqual({ status, nextBeginOffset: next, scan });
  });

  test('RocketMQ: nextOffsetCorrection keeps the old offset on a SLAVE unless offsetCheckInSlave', () => {
    expect(decideStart(3, 10, 20, true, SLAVE)).toEqual({
      status: 'OFFSET_TOO_SMALL',
      nextBeginOffset: 3,
      scan: false,
    });
    expect(decideStart(3, 10, 20, true, SLAVE_CHECKED).nextBeginOffset).toBe(10);
    expect(decideStart(25, 10, 20, true, SLAVE).nextBeginOffset).toBe(25);
    expect(nextOffsetCorrection(1, 2, MASTER)).toBe(2);
    expect(nextOffsetCorrection(1, 2, { brokerRole: 'SYNC_MASTER', offsetCheckInSlave: false })).toBe(2);
    expect(nextOffsetCorrection(1, 2, SLAVE)).toBe(1);
  });
});

describe('isTheBatchFull (DefaultMessageStore.java:1721-1749)', () => {
  test.each([
    // [why, size, maxMsgNums, maxPull, bytes, count, inMem, full]
    [
      'RocketMQ: never full while empty (the first message always goes, whatever its size)',
      10_000_000,
      32,
      100,
      0,
      0,
      false,
      false,
    ],
    ['RocketMQ: count + 1 > maxMsgNums', 100, 2, 1 << 30, 200, 2, true, true],
    ['below maxMsgNums', 100, 3, 1 << 30, 200, 2, true, false],
    ['RocketMQ: bytes + size > maxPull', 100, 32, 250, 200, 2, true, true],
    ['RocketMQ: in memory, bytes + size > 256 KiB', 1000, 1024, 1 << 30, 256 * 1024 - 999, 5, true, true],
    ['in memory, exactly 256 KiB fits', 1000, 1024, 1 << 30, 256 * 1024 - 1000, 5, true, false],
    ['RocketMQ: in memory, count >= 32', 10, 1024, 1 << 30, 320, 32, true, true],
    ['in memory, 31 taken: one more fits', 10, 1024, 1 << 30, 310, 31, true, false],
    ['RocketMQ: on disk, count >= 8', 10, 1024, 1 << 30, 80, 8, false, true],
    ['on disk, 7 taken', 10, 1024, 1 << 30, 70, 7, false, false],
    ['RocketMQ: on disk, bytes + size > 64 KiB', 1000, 1024, 1 << 30, 64 * 1024 - 999, 2, false, true],
  ] as const)('%s', (_why, size, nums, maxPull, bytes, count, inMem, full) => {
    expect(isTheBatchFull(size, 1, nums, maxPull, bytes, count, inMem, CAPS)).toBe(full);
  });

  test('RocketMQ: scan bound max(16000, maxMsgNums*20); pull size max(x,100) capped at 128 MiB; 40% of RAM in memory', () => {
    expect(maxFilterBytes(16000, 32)).toBe(16000);
    expect(maxFilterBytes(16000, 1000)).toBe(20000);
    expect(maxPullSize(1)).toBe(100);
    expect(maxPullSize(1 << 30)).toBe(128 * 1024 * 1024);
    expect(estimateInMem(1000, 600, 1000, 40)).toBe(true);
    expect(estimateInMem(1000, 599, 1000, 40)).toBe(false);
  });
});

/** Runs the scan over an in-memory queue: unit i points at commit-log offset i*100 (size 100). */
function run(
  p: Partial<ScanParams> & { offset: number; maxOffset: number },
  opts: { tags?: (i: number) => number; removedBelow?: number; missingFilesFrom?: number } = {},
): ScanResult & { reads: number[] } {
  const params: ScanParams = {
    ...CAPS,
    ...MASTER,
    maxMsgNums: 32,
    maxTotalMsgSize: 128 * 1024 * 1024,
    maxFilterMessageCount: 16000,
    travelCqFileNumWhenGetMessage: 1,
    cqUnitsPerFile: 1000,
    commitLogFileSize: 1000,
    commitLogMaxOffset: p.maxOffset * 100,
    totalPhysicalMemoryBytes: 1 << 30,
    accessMessageInMemoryMaxRatio: 40,
    filter: null,
    ...p,
  };
  const reads: number[] = [];
  const gen = scanConsumeQueue(params);
  let step = gen.next();
  while (!step.done) {
    const req = step.value;
    if (req.kind === 'units') {
      if (opts.missingFilesFrom !== undefined && req.from >= opts.missingFilesFrom) {
        step = gen.next(null);
        continue;
      }
      const end = Math.min(
        req.from + req.maxUnits,
        params.maxOffset,
        req.from - (req.from % params.cqUnitsPerFile) + params.cqUnitsPerFile,
      );
      const b = Buffer.alloc((end - req.from) * 20);
      for (let i = req.from; i < end; i++) {
        const at = (i - req.from) * 20;
        b.writeUInt32BE(0, at);
        b.writeUInt32BE(i * 100, at + 4);
        b.writeInt32BE(100, at + 8);
        b.writeInt32BE(0, at + 12);
        b.writeInt32BE(opts.tags ? opts.tags(i) : 0, at + 16);
      }
      step = gen.next(b);
    } else {
      reads.push(req.offset / 100);
      const gone = opts.removedBelow !== undefined && req.offset < opts.removedBelow;
      step = gen.next(gone ? null : Buffer.alloc(req.size, req.offset / 100));
    }
  }
  return { ...step.value, reads };
}

const tagFilter = (code: number): MessageFilter => ({
  isMatchedByConsumeQueue: (c) => c === code,
  isMatchedByCommitLog: () => true,
});

describe('scanConsumeQueue (DefaultMessageStore.java:863-979)', () => {
  test('RocketMQ: FOUND up to maxMsgNums; nextBeginOffset is the last examined + 1', () => {
    const r = run({ offset: 5, maxOffset: 100, maxMsgNums: 4 });
    expect(r).toMatchObject({ status: 'FOUND', nextBeginOffset: 9, queueOffsets: [5, 6, 7, 8], bufferTotalSize: 400 });
  });

  test('RocketMQ: 32 in memory whatever maxMsgNums says; 8 on disk', () => {
    expect(run({ offset: 0, maxOffset: 100, maxMsgNums: 1024 }).queueOffsets).toHaveLength(32);
    const disk = run({ offset: 0, maxOffset: 100, maxMsgNums: 1024, totalPhysicalMemoryBytes: 1 });
    expect(disk.queueOffsets).toHaveLength(8);
    expect(disk.nextBeginOffset).toBe(8);
    expect(disk.suggestPullingFromSlave).toBe(true);
  });

  test('RocketMQ: filtered entries advance nextBeginOffset; the entry that fills the batch is not counted', () => {
    const r = run(
      { offset: 0, maxOffset: 100, maxMsgNums: 2, filter: tagFilter(7) },
      { tags: (i) => (i % 3 === 0 ? 7 : 1) },
    );
    expect(r.queueOffsets).toEqual([0, 3]);
    expect(r.nextBeginOffset).toBe(4);
  });

  test('RocketMQ: an all-filtered scan is NO_MATCHED_MESSAGE and advances by maxFilterBytes/20 = 800', () => {
    const r = run({ offset: 10, maxOffset: 5000, cqUnitsPerFile: 100_000, filter: tagFilter(7) });
    expect(r).toMatchObject({ status: 'NO_MATCHED_MESSAGE', nextBeginOffset: 810, messages: [] });
    expect(r.reads).toEqual([]);
    const wide = run({ offset: 10, maxOffset: 5000, cqUnitsPerFile: 100_000, maxMsgNums: 1000, filter: tagFilter(7) });
    expect(wide.nextBeginOffset).toBe(1010);
  });

  test('RocketMQ: the scan stays in one consume-queue file (travelCqFileNumWhenGetMessage = 1)', () => {
    const r = run({ offset: 995, maxOffset: 5000, filter: tagFilter(7) });
    expect(r.nextBeginOffset).toBe(1000);
    const two = run({ offset: 995, maxOffset: 5000, filter: tagFilter(7), travelCqFileNumWhenGetMessage: 2 });
    expect(two.nextBeginOffset).toBe(1795);
  });

  test('RocketMQ: OFFSET_FOUND_NULL rolls to the next consume-queue file', () => {
    const r = run({ offset: 1234, maxOffset: 5000 }, { missingFilesFrom: 0 });
    expect(r).toMatchObject({ status: 'OFFSET_FOUND_NULL', nextBeginOffset: 2000 });
  });

  test('RocketMQ: MESSAGE_WAS_REMOVING skips the rest of the gone commit-log segment', () => {
    // Units 0..9 live in commit-log segment 0 (offsets 0..900); segment 0 is gone.
    const r = run({ offset: 3, maxOffset: 100, maxMsgNums: 4 }, { removedBelow: 1000 });
    expect(r.status).toBe('FOUND');
    expect(r.reads[0]).toBe(3); // one failed read, then the rest of segment 0 is skipped without reading
    expect(r.reads.slice(1)).toEqual([10, 11, 12, 13]);
    expect(r.queueOffsets).toEqual([10, 11, 12, 13]);
    const all = run({ offset: 3, maxOffset: 8 }, { removedBelow: 1000 });
    expect(all).toMatchObject({ status: 'MESSAGE_WAS_REMOVING', nextBeginOffset: 8, messages: [] });
  });

  test('RocketMQ: the commit-log stage counts what it drops and keeps the status NO_MATCHED_MESSAGE', () => {
    const drop: MessageFilter = { isMatchedByConsumeQueue: () => true, isMatchedByCommitLog: () => false };
    const r = run({ offset: 0, maxOffset: 5, filter: drop });
    expect(r).toMatchObject({ status: 'NO_MATCHED_MESSAGE', filterMessageCount: 5, nextBeginOffset: 5 });
  });
});
