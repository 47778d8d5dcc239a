/**
 * The checks a stored record must pass before the store serves it or dispatches it. The body CRC covers
 * the body only, so a damaged header field must be caught by the record's internal consistency
 * (RocketMQ: CommitLog.checkMessageAndReturnSize) and by what the consume queue says the record is:
 * its topic, queue and queue offset.
 * @pure
 */
import { CompressionType, MAGIC_CODE_V2, MessageSysFlag, checkRecord } from '../common/codec/index.js';

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
  if (b.length < 8 || b.readInt32BE(0) !== b.length) return `TOTALSIZE does not frame the ${b.length} bytes read`;
  const c = checkRecord(b, 0, { checkCRC });
  if (c.kind !== 'message') return c.kind === 'blank' ? 'a segment-end filler' : c.reason;
  const stated = b.readUInt32BE(28) * 0x1_0000_0000 + b.readUInt32BE(32);
  if (stated !== offset) return `the record says it is at ${stated}`;
  const sysFlag = b.readInt32BE(36);
  if ((sysFlag & ~STORED_SYSFLAG_BITS) !== 0) return `sysFlag 0x${(sysFlag >>> 0).toString(16)} has undefined bits`;
  const compression = (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8;
  const compressed = (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0;
  if (compression !== 0 && (!compressed || compression > CompressionType.ZLIB)) {
    return `sysFlag 0x${(sysFlag >>> 0).toString(16)} names compression ${compression}`;
  }
  const queueId = b.readInt32BE(12);
  if (queueId < 0) return `queueId ${queueId}`;
  const bornLength = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) === 0 ? 8 : 20;
  const storeLength = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) === 0 ? 8 : 20;
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
  const bodyLenAt = reconsumeAt + 4 + 8;
  const bodyLength = b.readInt32BE(bodyLenAt);
  const bodyAt = bodyLenAt + 4;
  const version2 = b.readInt32BE(4) === MAGIC_CODE_V2;
  const topicLenAt = bodyAt + bodyLength;
  const topicLength = version2 ? b.readUInt16BE(topicLenAt) : b.readUInt8(topicLenAt);
  const topicAt = topicLenAt + (version2 ? 2 : 1);
  const propsAt = topicAt + topicLength + 2;
  const topicBytes = b.subarray(topicAt, topicAt + topicLength);
  const props = b.subarray(propsAt, b.length);
  if (!isUtf8(topicBytes) || !isUtf8(props)) return 'topic or properties are not UTF-8';
  if (!propertiesWellFormed(props)) return 'properties are not name\\u0001value pairs separated by \\u0002';
  if (compressed && bodyLength > 0 && !looksCompressed(b.subarray(bodyAt, bodyAt + bodyLength), compression)) {
    return 'a body flagged compressed does not start like compressed data';
  }
  if (expected) {
    const topic = topicBytes.toString('utf8');
    if (topic !== expected.topic) return `topic ${JSON.stringify(topic)}, the queue's is ${expected.topic}`;
    if (queueId !== expected.queueId) return `queueId ${queueId}, the queue's is ${expected.queueId}`;
    const queueOffset = b.readUInt32BE(20) * 0x1_0000_0000 + b.readUInt32BE(24);
    if (queueOffset !== expected.queueOffset)
      return `queue offset ${queueOffset}, the unit's is ${expected.queueOffset}`;
  }
  return null;
}

/**
 * Properties as the store writes them: `name\u0001value\u0002` for every property, the last included.
 * Every pair holds its \u0001 (a value may hold more), and the string ends with \u0002.
 */
function propertiesWellFormed(p: Buffer): boolean {
  if (p.length === 0) return true;
  if (p[p.length - 1] !== 2) return false;
  for (let at = 0; at < p.length;) {
    const end = p.indexOf(2, at);
    const sep = p.indexOf(1, at);
    if (sep < 0 || sep > end) return false;
    at = end + 1;
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
