/**
 * The getMessage decision, free of I/O: the status and offset chosen before any read, the per-pull
 * caps (isTheBatchFull), and the scan over consume-queue units as a generator that asks its driver for
 * bytes (the units of a consume-queue file, a record of the commit log) and returns the result.
 * RocketMQ: DefaultMessageStore.getMessage, nextOffsetCorrection, isTheBatchFull,
 * estimateInMemByCommitOffset.
 * @pure
 */
import type { GetMessageStatus, MessageFilter } from './types.js';

export const CQ_UNIT_BYTES = 20;
/** RocketMQ: MAX_PULL_MSG_SIZE, the ceiling of maxTotalMsgSize (128 MiB). */
export const MAX_PULL_MSG_SIZE = 128 * 1024 * 1024;
/** A consume-queue unit whose size field is this is a filler, not a record. */
const FILLER_SIZE = 0x7fffffff;

export interface OffsetCorrectionPolicy {
  brokerRole: 'ASYNC_MASTER' | 'SYNC_MASTER' | 'SLAVE';
  offsetCheckInSlave: boolean;
}

/**
 * RocketMQ: nextOffsetCorrection — the new offset, except on a SLAVE without offsetCheckInSlave,
 * which keeps the old one (DefaultMessageStore.java:1680-1687).
 */
export function nextOffsetCorrection(oldOffset: number, newOffset: number, policy: OffsetCorrectionPolicy): number {
  return policy.brokerRole === 'SLAVE' && !policy.offsetCheckInSlave ? oldOffset : newOffset;
}

export interface StartDecision {
  status: GetMessageStatus;
  nextBeginOffset: number;
  /** True when the offset lies inside [min, max): the caller scans the queue. */
  scan: boolean;
}

/**
 * The status before any read (DefaultMessageStore.java:850-861, 981-984). `queueExists` false gives
 * NO_MATCHED_LOGIC_QUEUE. For `scan: true` the status is the scan's starting status.
 */
export function decideStart(
  offset: number,
  minOffset: number,
  maxOffset: number,
  queueExists: boolean,
  policy: OffsetCorrectionPolicy,
): StartDecision {
  const corr = (n: number): number => nextOffsetCorrection(offset, n, policy);
  if (!queueExists) return { status: 'NO_MATCHED_LOGIC_QUEUE', nextBeginOffset: corr(0), scan: false };
  if (maxOffset === 0) return { status: 'NO_MESSAGE_IN_QUEUE', nextBeginOffset: corr(0), scan: false };
  if (offset < minOffset) return { status: 'OFFSET_TOO_SMALL', nextBeginOffset: corr(minOffset), scan: false };
  if (offset === maxOffset) return { status: 'OFFSET_OVERFLOW_ONE', nextBeginOffset: corr(offset), scan: false };
  if (offset > maxOffset) return { status: 'OFFSET_OVERFLOW_BADLY', nextBeginOffset: corr(maxOffset), scan: false };
  return { status: 'NO_MATCHED_MESSAGE', nextBeginOffset: offset, scan: true };
}

export interface TransferCaps {
  maxTransferCountOnMessageInMemory: number;
  maxTransferBytesOnMessageInMemory: number;
  maxTransferCountOnMessageInDisk: number;
  maxTransferBytesOnMessageInDisk: number;
}

/**
 * RocketMQ: isTheBatchFull (DefaultMessageStore.java:1721-1749). Never full while nothing is taken
 * (the first message is always returned, whatever its size).
 */
export function isTheBatchFull(
  sizePy: number,
  unitBatchNum: number,
  maxMsgNums: number,
  maxMsgSize: number,
  bufferTotal: number,
  messageTotal: number,
  isInMem: boolean,
  caps: TransferCaps,
): boolean {
  if (bufferTotal === 0 || messageTotal === 0) return false;
  if (messageTotal + unitBatchNum > maxMsgNums) return true;
  if (bufferTotal + sizePy > maxMsgSize) return true;
  if (isInMem) {
    if (bufferTotal + sizePy > caps.maxTransferBytesOnMessageInMemory) return true;
    return messageTotal > caps.maxTransferCountOnMessageInMemory - 1;
  }
  if (bufferTotal + sizePy > caps.maxTransferBytesOnMessageInDisk) return true;
  return messageTotal > caps.maxTransferCountOnMessageInDisk - 1;
}

/** RocketMQ: estimateInMemByCommitOffset — within `ratio`% of RAM behind the commit-log head. */
export function estimateInMem(
  commitLogMaxOffset: number,
  offsetPy: number,
  totalMemBytes: number,
  ratioPercent: number,
): boolean {
  return commitLogMaxOffset - offsetPy <= Math.floor(totalMemBytes * (ratioPercent / 100));
}

/** RocketMQ: maxFilterMessageSize = max(maxFilterMessageCount, maxMsgNums * 20), in CQ bytes. */
export function maxFilterBytes(maxFilterMessageCount: number, maxMsgNums: number): number {
  return Math.max(maxFilterMessageCount, maxMsgNums * CQ_UNIT_BYTES);
}

/** RocketMQ: maxPullSize = max(maxTotalMsgSize, 100), at most 128 MiB. */
export function maxPullSize(maxTotalMsgSize: number): number {
  return Math.min(Math.max(maxTotalMsgSize, 100), MAX_PULL_MSG_SIZE);
}

export interface ScanParams extends TransferCaps, OffsetCorrectionPolicy {
  offset: number;
  maxOffset: number;
  maxMsgNums: number;
  maxTotalMsgSize: number;
  maxFilterMessageCount: number;
  travelCqFileNumWhenGetMessage: number;
  /** Units per consume-queue file (for OFFSET_FOUND_NULL's roll to the next file). */
  cqUnitsPerFile: number;
  /** Commit-log segment size (for MESSAGE_WAS_REMOVING's skip to the next segment). */
  commitLogFileSize: number;
  commitLogMaxOffset: number;
  totalPhysicalMemoryBytes: number;
  accessMessageInMemoryMaxRatio: number;
  filter: MessageFilter | null;
}

/** What the scan asks its driver for. */
export type ScanRequest =
  /** Consume-queue units from queue offset `from` to the end of its file (at most `maxUnits`); null if none. */
  | { kind: 'units'; from: number; maxUnits: number }
  /**
   * The record at commit-log `offset` of `size` bytes; null when its segment is gone (the rest of the
   * segment is skipped), an empty buffer when the bytes there are not that record (this unit is skipped).
   */
  | { kind: 'record'; offset: number; size: number; queueOffset: number };

export interface ScanResult {
  status: GetMessageStatus;
  nextBeginOffset: number;
  messages: Buffer[];
  queueOffsets: number[];
  bufferTotalSize: number;
  filterMessageCount: number;
  suggestPullingFromSlave: boolean;
}

/**
 * The scan of DefaultMessageStore.getMessage (java:863-979) for an offset inside [min, max).
 * Yields requests; the driver answers each with a Buffer or null.
 */
export function* scanConsumeQueue(p: ScanParams): Generator<ScanRequest, ScanResult, Buffer | null> {
  const corr = (n: number): number => nextOffsetCorrection(p.offset, n, p);
  const filterBytes = maxFilterBytes(p.maxFilterMessageCount, p.maxMsgNums);
  const maxPull = maxPullSize(p.maxTotalMsgSize);
  const memBytes = Math.floor(p.totalPhysicalMemoryBytes * (p.accessMessageInMemoryMaxRatio / 100));
  const r: ScanResult = {
    status: 'NO_MATCHED_MESSAGE',
    nextBeginOffset: p.offset,
    messages: [],
    queueOffsets: [],
    bufferTotalSize: 0,
    filterMessageCount: 0,
    suggestPullingFromSlave: false,
  };
  let next = p.offset;
  let lastExaminedPy = -1;
  let files = 0;
  while (r.bufferTotalSize <= 0 && next < p.maxOffset && files++ < p.travelCqFileNumWhenGetMessage) {
    // The scan never passes `offset + filterBytes/20`, so the driver need not read further.
    const maxUnits = Math.max(
      1,
      Math.min(p.maxOffset - next, p.offset + Math.ceil(filterBytes / CQ_UNIT_BYTES) - next),
    );
    const units = yield { kind: 'units', from: next, maxUnits };
    if (units === null) {
      // RocketMQ: OFFSET_FOUND_NULL — no consume-queue file holds `next`; jump to the next file.
      r.status = 'OFFSET_FOUND_NULL';
      next = corr(next + p.cqUnitsPerFile - (next % p.cqUnitsPerFile));
      break;
    }
    let skipBelowPy = -1;
    const from = next;
    const count = Math.floor(units.length / CQ_UNIT_BYTES);
    for (let i = 0; i < count && next < p.maxOffset; i++) {
      const base = i * CQ_UNIT_BYTES;
      const offsetPy = units.readUInt32BE(base) * 0x1_0000_0000 + units.readUInt32BE(base + 4);
      const sizePy = units.readInt32BE(base + 8);
      const tagsCode = units.readInt32BE(base + 12) * 0x1_0000_0000 + units.readUInt32BE(base + 16);
      const unitOffset = from + i;
      const isInMem = p.commitLogMaxOffset - offsetPy <= memBytes;
      if ((unitOffset - p.offset) * CQ_UNIT_BYTES >= filterBytes) break;
      if (isTheBatchFull(sizePy, 1, p.maxMsgNums, maxPull, r.bufferTotalSize, r.queueOffsets.length, isInMem, p)) {
        break;
      }
      if (r.bufferTotalSize >= maxPull) break;
      lastExaminedPy = offsetPy;
      next = unitOffset + 1;
      if (skipBelowPy >= 0 && offsetPy < skipBelowPy) continue;
      if (p.filter && !p.filter.isMatchedByConsumeQueue(tagsCode)) {
        if (r.bufferTotalSize === 0) r.status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      const record =
        sizePy === FILLER_SIZE
          ? null
          : yield { kind: 'record', offset: offsetPy, size: sizePy, queueOffset: unitOffset };
      if (record === null) {
        // RocketMQ: the commit-log segment is gone; skip the rest of it.
        if (r.bufferTotalSize === 0) r.status = 'MESSAGE_WAS_REMOVING';
        skipBelowPy = offsetPy + p.commitLogFileSize - (offsetPy % p.commitLogFileSize);
        continue;
      }
      if (record.length === 0) {
        // A damaged record (or a unit that does not name one): skip this unit only.
        if (r.bufferTotalSize === 0) r.status = 'NO_MATCHED_MESSAGE';
        continue;
      }
      if (p.filter && !p.filter.isMatchedByCommitLog(record, null)) {
        if (r.bufferTotalSize === 0) r.status = 'NO_MATCHED_MESSAGE';
        r.filterMessageCount++;
        continue;
      }
      r.messages.push(record);
      r.queueOffsets.push(unitOffset);
      r.bufferTotalSize += record.length;
      r.status = 'FOUND';
      skipBelowPy = -1;
    }
  }
  if (lastExaminedPy >= 0) r.suggestPullingFromSlave = p.commitLogMaxOffset - lastExaminedPy > memBytes;
  r.nextBeginOffset = next;
  return r;
}
