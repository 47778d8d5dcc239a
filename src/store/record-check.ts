/**
 * The checks a stored record must pass before the store serves it or dispatches it. The body CRC covers
 * the body only, so a damaged header field must be caught by the record's internal consistency
 * (RocketMQ: CommitLog.checkMessageAndReturnSize) and by what the consume queue says the record is:
 * its topic, queue and queue offset.
 * @pure
 */
import {
  CompressionType,
  MAX_PROPERTIES_BYTES,
  MAX_TOPIC_BYTES_V2,
  MessageSysFlag,
  storedRecordLength,
} from '../common/codec/index.js';
import { checkRecordLayout, newLayout, type RecordLayout } from '../common/codec/record-scan.js';

/** Every sysFlag bit a stored record may carry (and a producer may send). */
export const STORED_SYSFLAG_BITS =
  MessageSysFlag.COMPRESSED_FLAG |
  MessageSysFlag.MULTI_TAGS_FLAG |
  MessageSysFlag.TRANSACTION_MASK |
  MessageSysFlag.BORNHOST_V6_FLAG |
  MessageSysFlag.STOREHOSTADDRESS_V6_FLAG |
  MessageSysFlag.COMPRESSION_TYPE_MASK;

/** What the consume queue says a record is. */
export interface ExpectedRecord {
  topic: string;
  queueId: number;
  queueOffset: number;
}

const layout = newLayout();

/**
 * Why the `b.length` bytes of `b` are not the valid record stored at commit-log `offset` (and, when
 * `expected` is given, the record of that topic, queue and queue offset), or null when they are.
 * `isUtf8` checks the properties' bytes (injected: this module imports no node module).
 */
export function recordProblem(
  b: Buffer,
  offset: number,
  checkCRC: boolean,
  isUtf8: (bytes: Uint8Array) => boolean,
  expected?: ExpectedRecord,
): string | null {
  return (
    framingProblem(b, offset, checkCRC) ??
    contentProblem(b, layout, isUtf8) ??
    (expected ? identityProblem(b, layout, expected) : null)
  );
}

/**
 * `recordProblem` for a record this store wrote in this run and still holds in memory (the read cache):
 * its content was checked before it was stored (`storedRecordProblem`) and its CRC computed here, so
 * only that these bytes frame the record asked for is checked — a damaged consume-queue unit can still
 * point at the wrong bytes.
 */
export function cachedRecordProblem(b: Buffer, offset: number, expected: ExpectedRecord): string | null {
  return framingProblem(b, offset, false) ?? identityProblem(b, layout, expected);
}

/**
 * Why an encoded record about to be stored would not pass `recordProblem` once stored, or null: a record
 * the read path would refuse is refused on the way in instead (its offset is not known yet).
 */
export function storedRecordProblem(b: Buffer, isUtf8: (bytes: Uint8Array) => boolean): string | null {
  const c = checkRecordLayout(b, 0, false, layout);
  if (c.kind !== 'message') return c.kind === 'blank' ? 'a segment-end filler' : c.reason;
  if (c.size !== b.length) return `TOTALSIZE does not frame the ${b.length} bytes`;
  return contentProblem(b, layout, isUtf8);
}

/**
 * The largest record a store accepts: a body of `maxMessageSize` bytes plus the largest header, topic
 * and properties, within `segmentMaxRecord` (what one commit-log segment can hold).
 */
export function maxRecordBytes(maxMessageSize: number, segmentMaxRecord: number): number {
  const v6 = MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  const largest = storedRecordLength(2, v6, maxMessageSize, MAX_TOPIC_BYTES_V2, MAX_PROPERTIES_BYTES);
  return Math.min(largest, segmentMaxRecord);
}

/** The record's structure (TOTALSIZE, magic, lengths, optionally the body CRC) and its stated offset; fills `layout`. */
function framingProblem(b: Buffer, offset: number, checkCRC: boolean): string | null {
  if (b.length < 8 || b.readInt32BE(0) !== b.length) return `TOTALSIZE does not frame the ${b.length} bytes read`;
  const c = checkRecordLayout(b, 0, checkCRC, layout);
  if (c.kind !== 'message') return c.kind === 'blank' ? 'a segment-end filler' : c.reason;
  const stated = b.readUInt32BE(28) * 0x1_0000_0000 + b.readUInt32BE(32);
  if (stated !== offset) return `the record says it is at ${stated}`;
  return null;
}

/** The fields a reader decodes, of a record whose structure `l` holds. */
function contentProblem(b: Buffer, l: RecordLayout, isUtf8: (bytes: Uint8Array) => boolean): string | null {
  const sysFlag = l.sysFlag;
  if ((sysFlag & ~STORED_SYSFLAG_BITS) !== 0) return `sysFlag 0x${(sysFlag >>> 0).toString(16)} has undefined bits`;
  const compression = (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8;
  const compressed = (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0;
  if (compression !== 0 && (!compressed || compression > CompressionType.ZLIB)) {
    return `sysFlag 0x${(sysFlag >>> 0).toString(16)} names compression ${compression}`;
  }
  const queueId = b.readInt32BE(12);
  if (queueId < 0) return `queueId ${queueId}`;
  const bornLength = l.bornLength + 4;
  const storeLength = l.storeLength + 4;
  // TOTALSIZE MAGIC CRC QUEUEID FLAG QUEUEOFFSET PHYSICALOFFSET SYSFLAG BORNTIMESTAMP BORNHOST
  // STORETIMESTAMP STOREHOST RECONSUMETIMES PREPAREDTXOFFSET BODYLENGTH BODY TOPICLENGTH TOPIC ...
  // Fields a reader decodes: 64-bit values within JavaScript's safe range, never negative, and ports
  // of 16 bits (a flipped high bit fails a consumer's decode otherwise).
  const long = (at: number): number => b.readInt32BE(at) * 0x1_0000_0000 + b.readUInt32BE(at + 4);
  const storeTsAt = 48 + bornLength;
  const reconsumeAt = storeTsAt + 8 + storeLength;
  for (const [name, at] of [
    ['queue offset', 20],
    ['bornTimestamp', 40],
    ['storeTimestamp', storeTsAt],
    ['preparedTransactionOffset', reconsumeAt + 4],
  ] as const) {
    const v = long(at);
    if (v < 0 || !Number.isSafeInteger(v)) return `${name} ${v}`;
  }
  for (const [name, at] of [
    ['bornHost', 48 + bornLength - 4],
    ['storeHost', storeTsAt + 8 + storeLength - 4],
  ] as const) {
    const port = b.readInt32BE(at);
    if (port < 0 || port > 65535) return `${name} port ${port}`;
  }
  if (b.readInt32BE(reconsumeAt) < 0) return `reconsumeTimes ${b.readInt32BE(reconsumeAt)}`;
  const topicBytes = b.subarray(l.topicStart, l.topicStart + l.topicLength);
  const props = b.subarray(l.propsStart, l.contentEnd);
  if (!isUtf8(topicBytes) || !isUtf8(props)) return 'topic or properties are not UTF-8';
  if (!propertiesWellFormed(props)) return 'properties are not name\\u0001value pairs separated by \\u0002';
  if (
    compressed &&
    l.bodyLength > 0 &&
    !looksCompressed(b.subarray(l.bodyStart, l.bodyStart + l.bodyLength), compression)
  ) {
    return 'a body flagged compressed does not start like compressed data';
  }
  return null;
}

/** Whether the record is the one of `expected`'s topic, queue and queue offset (topics are ASCII by their naming rules). */
function identityProblem(b: Buffer, l: RecordLayout, expected: ExpectedRecord): string | null {
  const topic = expected.topic;
  let same = l.topicLength === topic.length;
  for (let i = 0; same && i < topic.length; i++) same = b[l.topicStart + i] === topic.charCodeAt(i);
  if (!same) {
    const stored = b.toString('utf8', l.topicStart, l.topicStart + l.topicLength);
    return `topic ${JSON.stringify(stored)}, the queue's is ${topic}`;
  }
  const queueId = b.readInt32BE(12);
  if (queueId !== expected.queueId) return `queueId ${queueId}, the queue's is ${expected.queueId}`;
  const queueOffset = b.readUInt32BE(20) * 0x1_0000_0000 + b.readUInt32BE(24);
  if (queueOffset !== expected.queueOffset) return `queue offset ${queueOffset}, the unit's is ${expected.queueOffset}`;
  return null;
}

/**
 * Properties as the store writes them: `name\u0001value\u0002` for every property, the last included.
 * Every pair holds its \u0001 (a value may hold more), and the string ends with \u0002.
 */
function propertiesWellFormed(p: Buffer): boolean {
  const n = p.length;
  if (n === 0) return true;
  if (p[n - 1] !== 2) return false;
  // A byte loop: a search call per pair costs more than reading a few dozen bytes.
  let separated = false;
  for (let i = 0; i < n; i++) {
    const c = p[i];
    if (c === 1) separated = true;
    else if (c === 2) {
      if (!separated) return false;
      separated = false;
    }
  }
  return true;
}

/** Whether `body` starts with the header of the compression (0 = zlib): zlib's CMF/FLG, the LZ4 or zstd frame magic. */
function looksCompressed(body: Buffer, compression: number): boolean {
  if (compression === 0 || compression === CompressionType.ZLIB) {
    return body.length >= 2 && ((body[0] as number) & 0x0f) === 8 && body.readUInt16BE(0) % 31 === 0;
  }
  if (compression === CompressionType.LZ4) return body.length >= 4 && body.readUInt32LE(0) === 0x184d2204;
  return body.length >= 4 && body.readUInt32LE(0) === 0xfd2fb528;
}
