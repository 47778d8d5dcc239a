/**
 * Lookups of single messages (RocketMQ: DefaultMessageStore.lookMessageByOffset,
 * getOffsetInQueueByTime, getMessageStoreTimeStamp, checkInMemByConsumeOffset): by commit-log offset or
 * offset message id, by store time, and whether a consume offset is still in memory.
 */
import { isUtf8 } from 'node:buffer';
import {
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MIN_RECORD_LENGTH,
  MessageSysFlag,
  decodeMessage,
  decodeMessageId,
  peekRecordFields,
} from '../common/codec/index.js';
import type { MessageExt } from '../common/message.js';
import type { CommitLog } from './commit-log.js';
import type { ConsumeQueueTable } from './consume-queue-table.js';
import { inPageCache } from './get-message.js';
import { findOffsetByTime } from './offset-by-time.js';
import type { ResolvedStoreOptions } from './options.js';
import { maxRecordBytes, recordProblem } from './record-check.js';
import type { BoundaryType } from './types.js';

/** What the lookups work with. */
export interface LookupContext {
  readonly o: ResolvedStoreOptions;
  readonly commitLog: CommitLog;
  readonly queues: ConsumeQueueTable;
}

/** The record at a commit-log offset, from the read cache or the file; null when it is gone. */
async function readRecord(commitLog: CommitLog, offset: number, size: number): Promise<Buffer | null> {
  return commitLog.readCached(offset, size) ?? (await commitLog.read(offset, size));
}

/**
 * The stored bytes of the record at a commit-log offset, or null. The offset comes from a client (a
 * message id), so nothing is trusted: the size read there must frame a record no larger than the
 * largest one this store accepts, and the bytes must be a valid record that names this offset.
 */
export async function lookMessageByOffsetRaw(ctx: LookupContext, commitLogOffset: number): Promise<Buffer | null> {
  const { o, commitLog } = ctx;
  if (!Number.isSafeInteger(commitLogOffset) || commitLogOffset < commitLog.minOffset) return null;
  const head = await readRecord(commitLog, commitLogOffset, 8);
  if (!head) return null;
  const size = head.readInt32BE(0);
  const magic = head.readInt32BE(4);
  if (magic !== MAGIC_CODE_V1 && magic !== MAGIC_CODE_V2) return null;
  if (size < MIN_RECORD_LENGTH || size > maxRecordBytes(o.maxMessageSize, commitLog.maxRecordSize)) return null;
  const b = await readRecord(commitLog, commitLogOffset, size);
  if (!b || recordProblem(b, commitLogOffset, o.checkCRCOnRead, isUtf8) !== null) return null;
  return matchesItsUnit(ctx.queues, b, commitLogOffset) ? b : null;
}

/**
 * Whether the consume queue the record names (topic, queue id, queue offset) has a unit naming it: a
 * damaged topic, queue id or queue offset names another queue's unit or none. Records that take no
 * place in a queue (prepared or rolled-back transaction halves) and those whose unit retention already
 * passed have nothing to check against.
 */
function matchesItsUnit(queues: ConsumeQueueTable, b: Buffer, offset: number): boolean {
  const f = peekRecordFields(b, 0);
  const tran = f.sysFlag & MessageSysFlag.TRANSACTION_MASK;
  if (tran === MessageSysFlag.TRANSACTION_PREPARED_TYPE || tran === MessageSysFlag.TRANSACTION_ROLLBACK_TYPE) {
    return true;
  }
  const cq = queues.get(f.topic, f.queueId);
  if (!cq || f.queueOffset >= cq.maxOffset) return false;
  if (f.queueOffset < cq.minOffset) return true;
  return cq.unit(f.queueOffset)?.offsetPy === offset;
}

/** The message at a commit-log offset (body as stored, not decompressed), or null. */
export async function lookMessageByOffset(ctx: LookupContext, commitLogOffset: number): Promise<MessageExt | null> {
  const b = await lookMessageByOffsetRaw(ctx, commitLogOffset);
  return b ? decodeMessage(b, 0, { decompressBody: false }).message : null;
}

/** The message named by an offset message id (store host + commit-log offset), or null. */
export async function lookMessageByMsgId(ctx: LookupContext, offsetMsgId: string): Promise<MessageExt | null> {
  let offset: number;
  try {
    offset = decodeMessageId(offsetMsgId).offset;
  } catch {
    return null;
  }
  return lookMessageByOffset(ctx, offset);
}

/** RocketMQ: getOffsetInQueueByTime: binary search over the records' store times. */
export async function getOffsetInQueueByTime(
  ctx: LookupContext,
  topic: string,
  queueId: number,
  timestamp: number,
  boundary: BoundaryType,
): Promise<number> {
  const cq = ctx.queues.get(topic, queueId);
  if (!cq || cq.maxOffset <= cq.minOffset) return cq?.maxOffset ?? 0;
  const storeTimeAt = async (queueOffset: number): Promise<number | null> => {
    const u = cq.unit(queueOffset);
    if (!u) return null;
    const b = await readRecord(ctx.commitLog, u.offsetPy, u.size);
    if (!b) return null;
    return peekRecordFields(b, 0).storeTimestamp;
  };
  return findOffsetByTime(cq.minOffset, cq.maxOffset, timestamp, boundary, storeTimeAt);
}

/**
 * RocketMQ: getMessageStoreTimeStamp — the store time of the message at a queue offset, or -1 when the
 * queue has no message there (or its record is gone).
 */
export async function getMessageStoreTimeStamp(
  ctx: LookupContext,
  topic: string,
  queueId: number,
  queueOffset: number,
): Promise<number> {
  const u = ctx.queues.get(topic, queueId)?.unit(queueOffset);
  if (!u) return -1;
  const b = await readRecord(ctx.commitLog, u.offsetPy, u.size);
  return b ? peekRecordFields(b, 0).storeTimestamp : -1;
}

/**
 * RocketMQ: checkInMemByConsumeOffset — the unit at `consumeOffset` (or at `consumeOffset + batch`)
 * exists and its record is "in memory": in the read cache, or within the in-memory share of RAM
 * behind the commit-log head (where the page cache still holds it).
 */
export function checkInMemByConsumeOffset(
  ctx: LookupContext,
  topic: string,
  queueId: number,
  consumeOffset: number,
  batchSize: number,
): boolean {
  const cq = ctx.queues.get(topic, queueId);
  if (!cq || consumeOffset < cq.minOffset) return false;
  const first = cq.unit(consumeOffset);
  if (!first) return false;
  const last = batchSize > 1 ? (cq.unit(consumeOffset + batchSize) ?? first) : first;
  if (last.offsetPy < ctx.commitLog.minOffset) return false;
  return ctx.commitLog.isCached(last.offsetPy, last.size) || inPageCache(ctx, last.offsetPy);
}
