/**
 * The read path of the MessageStore (RocketMQ: DefaultMessageStore.getMessage): walks a consume queue
 * from a queue offset and gathers the records its units name into one pull body. The decisions (where
 * to start, when the batch is full, what the next offset is) are the pure rules of get-message-rules.ts;
 * this module feeds them consume-queue units and records from memory or the disk.
 */
import { isUtf8 } from 'node:buffer';
import { BLANK_MAGIC_CODE, MIN_RECORD_LENGTH, peekRecordFields } from '../common/codec/index.js';
import { StateError } from '../common/errors.js';
import { GROUP_MAX_LENGTH, nameProblem } from '../common/names.js';
import type { CommitLog } from './commit-log.js';
import { releaseWindows, type ReadWindow } from './commit-log-reads.js';
import type { ConsumeQueue } from './consume-queue.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import { decideStart, estimateInMem, scanConsumeQueue, MAX_PULL_MSG_SIZE } from './get-message-rules.js';
import type { ResolvedStoreOptions } from './options.js';
import { cachedRecordProblem, maxRecordBytes, recordProblem } from './record-check.js';
import { tagsCodeOf } from './reput-message-service.js';
import { CQ_FILLER_SIZE } from './layout.js';
import { READ_AHEAD_BYTES, pullBody, unitOffset, unitsSpanEnd, windowView } from './pull-body.js';
import type { GetMessageResult, MessageFilter } from './types.js';

/** The answer to the scan for a record that is damaged: skip its unit only. */
const DAMAGED = Buffer.alloc(0);
/** Commit-log bytes walked at most to rebuild one damaged consume-queue unit. */
const REBUILD_SCAN_BYTES = 4 * 1024 * 1024;

/** What the read path works with. */
export interface ReadContext {
  readonly o: ResolvedStoreOptions;
  readonly commitLog: CommitLog;
  readonly queues: ConsumeQueueTable;
  isRunning(): boolean;
}

/**
 * RocketMQ: DefaultMessageStore.getMessage. Consume-queue units and records not held in memory are
 * read asynchronously: a pull of old messages never blocks the event loop on the disk.
 */
export function getMessage(
  ctx: ReadContext,
  topic: string,
  queueId: number,
  offset: number,
  maxMsgNums: number,
  filter: MessageFilter | null,
): Promise<GetMessageResult> {
  return readMessages(ctx, topic, queueId, offset, maxMsgNums, filter, 0);
}

async function readMessages(
  ctx: ReadContext,
  topic: string,
  queueId: number,
  offset: number,
  maxMsgNums: number,
  filter: MessageFilter | null,
  attempt: number,
): Promise<GetMessageResult> {
  const { o, commitLog } = ctx;
  if (!ctx.isRunning()) throw new StateError('the message store is shut down');
  const cq = ctx.queues.get(topic, queueId);
  const validName = nameProblem('topic', topic, GROUP_MAX_LENGTH) === null;
  // RocketMQ finds-or-creates the queue, so an unknown queue reads as an empty one.
  const min = cq?.minOffset ?? 0;
  const max = cq?.maxOffset ?? 0;
  const start = decideStart(offset, min, max, validName, o);
  const result: GetMessageResult = {
    status: start.status,
    nextBeginOffset: start.nextBeginOffset,
    minOffset: min,
    maxOffset: max,
    messages: [],
    queueOffsets: [],
    bufferTotalSize: 0,
    messageCount: 0,
    suggestPullingFromSlave: false,
    filterMessageCount: 0,
  };
  if (!start.scan || !cq) return result;
  const scan = scanConsumeQueue({
    maxTransferCountOnMessageInMemory: o.maxTransferCountOnMessageInMemory,
    maxTransferBytesOnMessageInMemory: o.maxTransferBytesOnMessageInMemory,
    maxTransferCountOnMessageInDisk: o.maxTransferCountOnMessageInDisk,
    maxTransferBytesOnMessageInDisk: o.maxTransferBytesOnMessageInDisk,
    brokerRole: o.brokerRole,
    offsetCheckInSlave: o.offsetCheckInSlave,
    maxFilterMessageCount: o.maxFilterMessageCount,
    travelCqFileNumWhenGetMessage: o.travelCqFileNumWhenGetMessage,
    totalPhysicalMemoryBytes: o.totalPhysicalMemoryBytes,
    accessMessageInMemoryMaxRatio: o.accessMessageInMemoryMaxRatio,
    offset,
    maxOffset: max,
    maxMsgNums,
    maxTotalMsgSize: MAX_PULL_MSG_SIZE,
    cqUnitsPerFile: cq.unitsPerFile,
    commitLogFileSize: o.mappedFileSizeCommitLog,
    commitLogMaxOffset: commitLog.maxOffset,
    filter,
  });
  // Reads answered from memory (consume-queue units held in memory, the read cache, the current read
  // window) answer at once, and so do records the page cache is taken to hold (read on the loop); the
  // others read the file asynchronously, off the event loop. Records are views (ring or read window)
  // copied into one buffer below, unless they already lie back to back in one read window. A ring view
  // is only valid until the ring wraps past it: when the scan had to wait for the disk, each is checked
  // still cached, and the pull is read again if one was not.
  const window: ReadWindow = { start: 0, buf: null, wantEnd: 0 };
  let pullUnits: Buffer | null = null;
  const ringServed: number[] = [];
  let waited = false;
  let step = scan.next();
  while (!step.done) {
    const req = step.value;
    let answer: Buffer | null;
    if (req.kind === 'units') {
      let units = cq.readUnitsInMemory(req.from, req.maxUnits);
      if (units === undefined) {
        waited = true;
        units = await cq.readUnitsFromFile(req.from, req.maxUnits);
      }
      answer = units;
      pullUnits = units;
      window.wantEnd = units && units.length > 0 ? unitsSpanEnd(units, maxMsgNums, unitOffset(units, 0)) : 0;
    } else {
      let b: Buffer | null | undefined = commitLog.ringView(req.offset, req.size);
      const cached = b !== undefined;
      if (b) ringServed.push(req.offset, req.size);
      else {
        b = windowView(window, req.offset, req.size);
        if (!b) {
          // Past the stretch the last read covered: the next read covers the records from here on.
          if (pullUnits && req.offset >= window.wantEnd)
            window.wantEnd = unitsSpanEnd(pullUnits, maxMsgNums, req.offset);
          if (inPageCache(ctx, req.offset)) {
            b = commitLog.readWindowSync(req.offset, req.size, window, READ_AHEAD_BYTES);
          } else {
            waited = true;
            b = await commitLog.readWindow(req.offset, req.size, window, READ_AHEAD_BYTES);
          }
        }
      }
      answer = recordView(ctx, cq, req.queueOffset, req.offset, req.size, b, window, cached);
    }
    step = scan.next(answer);
  }
  // Shut down while reading: a read that found its file closed must not be answered as removed data.
  if (waited && !ctx.isRunning()) throw new StateError('the message store is shut down');
  if (waited && !stillCached(commitLog, ringServed)) {
    releaseWindows(window);
    if (attempt < 3) return readMessages(ctx, topic, queueId, offset, maxMsgNums, filter, attempt + 1);
    throw new StateError('getMessage: the read cache wrapped past the records of a pull three times');
  }
  const r = step.value;
  const body = pullBody(r, window);
  // The records now lie in `body`: every other read window of this pull goes back to the pool.
  releaseWindows(window, body);
  Object.assign(result, r, { messageCount: r.messages.length, messagesBuffer: body });
  return result;
}

/** Whether every `[offset, size]` pair of `ranges` is still in the read cache. */
function stillCached(commitLog: CommitLog, ranges: number[]): boolean {
  for (let i = 0; i < ranges.length; i += 2) {
    if (!commitLog.isCached(ranges[i] as number, ranges[i + 1] as number)) return false;
  }
  return true;
}

/**
 * Whether the page cache is taken to hold the commit log at `offset`: RocketMQ's estimate (within
 * accessMessageInMemoryMaxRatio of RAM behind the head). Such a record is read on the event loop.
 */
export function inPageCache(ctx: Pick<ReadContext, 'o' | 'commitLog'>, offset: number): boolean {
  return estimateInMem(
    ctx.commitLog.maxOffset,
    offset,
    ctx.o.totalPhysicalMemoryBytes,
    ctx.o.accessMessageInMemoryMaxRatio,
  );
}

/**
 * The record a unit names; null when its segment is gone, and an empty buffer (skip this unit only)
 * when it cannot be served. The bytes must be one valid record (its CRC is checked unless
 * checkCRCOnRead is off, and its header must be self-consistent) of this queue at this queue offset.
 * When they are not, the unit may be the damaged part: the record is looked for in the log between the
 * records of the units around it, and found, the unit is rebuilt and the record served. A damaged
 * record is never served.
 */
function recordView(
  ctx: ReadContext,
  cq: ConsumeQueue,
  queueOffset: number,
  offset: number,
  size: number,
  b: Buffer | null,
  window: ReadWindow,
  cached: boolean,
): Buffer | null {
  const expected = { topic: cq.topic, queueId: cq.queueId, queueOffset };
  // Bytes still in the read cache were written by this store in this run, their content checked before
  // it stored them: only that they are the record asked for is checked. Bytes read from the file get
  // every check (the file may have been damaged since).
  const problem = !b
    ? 'unreadable'
    : cached
      ? cachedRecordProblem(b, offset, expected)
      : recordProblem(b, offset, ctx.o.checkCRCOnRead, isUtf8, expected);
  if (b && problem === null) return b;
  if (offset < ctx.commitLog.minOffset || !ctx.isRunning()) return null;
  const found = rebuildUnit(ctx.o, ctx.commitLog, cq, queueOffset, window);
  if (found) return found;
  ctx.o.logger.warn(
    { topic: cq.topic, queueId: cq.queueId, queueOffset, offset, size, problem },
    'getMessage: damaged record skipped',
  );
  return DAMAGED;
}

/**
 * Looks for the record of `queueOffset` in the commit log between the records of the units around it
 * (records of one queue lie in queue order) and, found, rewrites the unit. Returns the record's bytes,
 * or null when no valid record of that queue offset lies there (then the record itself is damaged).
 */
function rebuildUnit(
  o: ResolvedStoreOptions,
  commitLog: CommitLog,
  cq: ConsumeQueue,
  queueOffset: number,
  window: ReadWindow,
): Buffer | null {
  const fileSize = o.mappedFileSizeCommitLog;
  const maxRecord = maxRecordBytes(o.maxMessageSize, commitLog.maxRecordSize);
  const prev = queueOffset > cq.minOffset ? cq.unit(queueOffset - 1) : null;
  const next = queueOffset + 1 < cq.maxOffset ? cq.unit(queueOffset + 1) : null;
  const to = Math.min(next && next.size !== CQ_FILLER_SIZE ? next.offsetPy : Infinity, commitLog.maxOffset);
  let pos =
    prev && prev.size > 0 && prev.size !== CQ_FILLER_SIZE && prev.offsetPy + prev.size <= to
      ? prev.offsetPy + prev.size
      : to - (to % fileSize); // no usable unit before: the segment of the next one
  pos = Math.max(pos, commitLog.minOffset);
  const expected = { topic: cq.topic, queueId: cq.queueId, queueOffset };
  for (let walked = 0; pos < to && walked < REBUILD_SCAN_BYTES;) {
    const head = commitLog.viewSync(pos, 8, window, READ_AHEAD_BYTES);
    if (!head) return null;
    const len = head.readInt32BE(0);
    if (head.readInt32BE(4) === BLANK_MAGIC_CODE) {
      const segEnd = pos - (pos % fileSize) + fileSize;
      walked += segEnd - pos;
      pos = segEnd;
      continue;
    }
    if (len < MIN_RECORD_LENGTH || len > maxRecord) return null; // lost the record boundaries
    const rec = commitLog.viewSync(pos, len, window, READ_AHEAD_BYTES);
    if (!rec) return null;
    if (recordProblem(rec, pos, o.checkCRCOnRead, isUtf8, expected) === null) {
      const f = peekRecordFields(rec, 0);
      cq.replaceUnit(queueOffset, pos, len, tagsCodeOf(o.delayLevelsMs, f.topic, f.properties, f.storeTimestamp));
      o.logger.warn(
        { topic: cq.topic, queueId: cq.queueId, queueOffset, offset: pos, size: len },
        'consume queue: damaged unit rebuilt from the commit log',
      );
      return rec;
    }
    walked += len;
    pos += len;
  }
  return null;
}
