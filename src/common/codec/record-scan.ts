/**
 * Structural check of one stored record (byte table in constants.ts): every length is read against
 * the record's TOTALSIZE and the buffer end, so nothing here reads out of bounds, allocates per field
 * or throws. The decoder, the store's recovery (`checkRecord`) and dispatch (`decodeProperties`,
 * `peekRecordFields`) all start from this scan.
 */
import { crc32 } from 'node:zlib';
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { tagsHashCode } from './java-string.js';
import { readInt16, readInt32, readInt64 } from './bytes.js';
import {
  BLANK_MAGIC_CODE,
  BLANK_RECORD_LENGTH,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MIN_RECORD_LENGTH,
  MessageSysFlag,
  storedRecordLength,
} from './constants.js';
import { string2messageProperties } from './properties.js';

/** Positions of one record's variable parts, filled by `scanRecord`. */
export interface RecordLayout {
  totalSize: number;
  version: 1 | 2;
  sysFlag: number;
  bornLength: number;
  storeLength: number;
  bodyStart: number;
  bodyLength: number;
  topicStart: number;
  topicLength: number;
  propsStart: number;
  propsLength: number;
  /** End of the properties: the record's content ends here; `start + totalSize` may be later (padding). */
  contentEnd: number;
  /** Where the failure was found, when the scan failed. */
  errorPosition: number;
  /** The failure is a record cut short by the end of the buffer (a torn tail), not corrupt bytes. */
  truncated: boolean;
}

export const newLayout = (): RecordLayout => ({
  totalSize: 0,
  version: 1,
  sysFlag: 0,
  bornLength: 4,
  storeLength: 4,
  bodyStart: 0,
  bodyLength: 0,
  topicStart: 0,
  topicLength: 0,
  propsStart: 0,
  propsLength: 0,
  contentEnd: 0,
  errorPosition: 0,
  truncated: false,
});

/**
 * Fills `l` with the layout of the record at `p`; returns `null` when it is well formed, else the reason
 * (and `l.errorPosition`, `l.truncated`). A blank (end-of-file) record is reported as `'blank'`.
 */
export function scanRecord(b: Uint8Array, p: number, l: RecordLayout): string | null {
  const len = b.length;
  l.truncated = false;
  l.errorPosition = p;
  if (!Number.isInteger(p) || p < 0 || p > len) return 'offset outside the buffer';
  if (p + 8 > len) {
    l.truncated = true;
    return `truncated record header: ${len - p} bytes left`;
  }
  const totalSize = readInt32(b, p);
  const magic = readInt32(b, p + 4);
  l.totalSize = totalSize;
  if (magic === BLANK_MAGIC_CODE) return 'blank';
  if (magic !== MAGIC_CODE_V1 && magic !== MAGIC_CODE_V2) {
    l.errorPosition = p + 4;
    return totalSize === 0 && magic === 0 ? 'no record (zero bytes)' : `bad magic code 0x${(magic >>> 0).toString(16)}`;
  }
  l.version = magic === MAGIC_CODE_V1 ? 1 : 2;
  if (totalSize < MIN_RECORD_LENGTH + (l.version - 1)) return `bad TOTALSIZE ${totalSize}`;
  const end = p + totalSize;
  if (end > len) {
    l.truncated = true;
    return `truncated record: TOTALSIZE ${totalSize} but ${len - p} bytes left`;
  }
  const sysFlag = readInt32(b, p + 36);
  l.sysFlag = sysFlag;
  l.bornLength = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) === 0 ? 4 : 16;
  l.storeLength = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) === 0 ? 4 : 16;
  let q = p + 48 + l.bornLength + 4 + 8 + l.storeLength + 4 + 4 + 8;
  if (q + 4 > end) {
    l.errorPosition = q;
    return 'record too short for its host addresses';
  }
  const bodyLength = readInt32(b, q);
  q += 4;
  if (bodyLength < 0 || bodyLength > end - q) {
    l.errorPosition = q - 4;
    return `bad body length ${bodyLength}`;
  }
  l.bodyStart = q;
  l.bodyLength = bodyLength;
  q += bodyLength;
  let topicLength: number;
  if (l.version === 1) {
    if (q + 1 > end) {
      l.errorPosition = q;
      return 'record too short for the topic length';
    }
    topicLength = ((b[q] as number) << 24) >> 24; // RocketMQ: V1 reads a signed byte
    q += 1;
  } else {
    if (q + 2 > end) {
      l.errorPosition = q;
      return 'record too short for the topic length';
    }
    topicLength = readInt16(b, q);
    q += 2;
  }
  if (topicLength < 0 || topicLength > end - q) {
    l.errorPosition = q - l.version;
    return `bad topic length ${topicLength}`;
  }
  l.topicStart = q;
  l.topicLength = topicLength;
  q += topicLength;
  if (q + 2 > end) {
    l.errorPosition = q;
    return 'record too short for the properties length';
  }
  const propsLength = readInt16(b, q);
  q += 2;
  if (propsLength < 0 || propsLength > end - q) {
    l.errorPosition = q - 2;
    return `bad properties length ${propsLength}`;
  }
  l.propsStart = q;
  l.propsLength = propsLength;
  l.contentEnd = q + propsLength;
  return null;
}

/**
 * Fills `l` for the record at `p` from the three variable lengths an earlier `scanRecord` of the same
 * bytes found (body, topic, properties), reading only fixed-position fields (TOTALSIZE, magic code,
 * sysFlag): no length is walked or checked again. Only for bytes that scanned well and are unchanged.
 */
export function layoutFromLengths(
  b: Uint8Array,
  p: number,
  bodyLength: number,
  topicLength: number,
  propsLength: number,
  l: RecordLayout,
): void {
  const sysFlag = readInt32(b, p + 36);
  const version = readInt32(b, p + 4) === MAGIC_CODE_V1 ? 1 : 2;
  l.totalSize = readInt32(b, p);
  l.version = version;
  l.sysFlag = sysFlag;
  l.bornLength = (sysFlag & MessageSysFlag.BORNHOST_V6_FLAG) === 0 ? 4 : 16;
  l.storeLength = (sysFlag & MessageSysFlag.STOREHOSTADDRESS_V6_FLAG) === 0 ? 4 : 16;
  l.bodyStart = p + 48 + l.bornLength + 4 + 8 + l.storeLength + 4 + 4 + 8 + 4;
  l.bodyLength = bodyLength;
  l.topicStart = l.bodyStart + bodyLength + version;
  l.topicLength = topicLength;
  l.propsStart = l.topicStart + topicLength + 2;
  l.propsLength = propsLength;
  l.contentEnd = l.propsStart + propsLength;
  l.errorPosition = p;
  l.truncated = false;
}

/** CRC32 & 0x7FFFFFFF of `b[start, start + length)`, as RocketMQ's UtilAll.crc32. */
export function crc32Masked(b: Uint8Array, start: number, length: number): number {
  return length > 0 ? crc32(b.subarray(start, start + length)) & 0x7fffffff : 0;
}

/** Outcome of `checkRecord`. */
export type RecordCheck =
  | { kind: 'message'; size: number }
  | { kind: 'blank'; size: number }
  | { kind: 'invalid'; reason: string; truncated: boolean };

export interface CheckRecordOptions {
  /** Verify BODYCRC against the stored body. Default true. */
  checkCRC?: boolean;
}

const checkLayout = newLayout();

/**
 * The store's recovery probe for the record at `offset` (RocketMQ: CommitLog.checkMessageAndReturnSize).
 * Never throws. `message`: a well-formed record whose TOTALSIZE equals the recomputed length and whose
 * body CRC matches. `blank`: the end-of-file filler; `size` is its TOTALSIZE (the bytes left in the
 * segment; only its 8 bytes need to be in `buffer`). `invalid`: anything else — `truncated` says the
 * record runs past the end of `buffer` (a torn tail) rather than holding wrong bytes.
 */
export function checkRecord(buffer: Uint8Array, offset = 0, options: CheckRecordOptions = {}): RecordCheck {
  return checkRecordLayout(buffer, offset, options.checkCRC ?? true, checkLayout);
}

/** `checkRecord`, leaving the record's layout in `l` (valid when the answer is `message`). */
export function checkRecordLayout(buffer: Uint8Array, offset: number, checkCRC: boolean, l: RecordLayout): RecordCheck {
  if (!(buffer instanceof Uint8Array)) return { kind: 'invalid', reason: 'not a buffer', truncated: false };
  const reason = scanRecord(buffer, offset, l);
  if (reason === 'blank') {
    return l.totalSize >= BLANK_RECORD_LENGTH
      ? { kind: 'blank', size: l.totalSize }
      : { kind: 'invalid', reason: `bad blank record size ${l.totalSize}`, truncated: false };
  }
  if (reason !== null) return { kind: 'invalid', reason, truncated: l.truncated };
  const expected = storedRecordLength(l.version, l.sysFlag, l.bodyLength, l.topicLength, l.propsLength);
  // RocketMQ: readers reject a record whose TOTALSIZE differs from the recomputed length.
  if (expected !== l.totalSize) {
    return {
      kind: 'invalid',
      reason: `TOTALSIZE ${l.totalSize} but the fields add up to ${expected}`,
      truncated: false,
    };
  }
  if (checkCRC) {
    const stored = readInt32(buffer, offset + 8);
    if (crc32Masked(buffer, l.bodyStart, l.bodyLength) !== stored) {
      return { kind: 'invalid', reason: 'body CRC mismatch', truncated: false };
    }
  }
  return { kind: 'message', size: l.totalSize };
}

function asBuffer(b: Uint8Array): Buffer {
  if (Buffer.isBuffer(b)) return b;
  if (!(b instanceof Uint8Array)) throw new InvalidArgumentError('buffer', 'must be a Buffer or Uint8Array');
  return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

function fail(reason: string, l: RecordLayout, offset: number): never {
  throw new DecodeError(`record at ${offset}: ${reason}`, l.errorPosition);
}

const propsLayout = newLayout();

/**
 * The properties of the record at `offset`, read without touching the body (RocketMQ:
 * MessageDecoder.decodeProperties, used by the SQL filter and dispatch): `null` when the record has
 * none. Throws DecodeError on a malformed record.
 */
export function decodeProperties(buffer: Uint8Array, offset = 0): Record<string, string> | null {
  const l = propsLayout;
  const b = asBuffer(buffer);
  const reason = scanRecord(b, offset, l);
  if (reason !== null) fail(reason === 'blank' ? 'blank (end-of-file) record' : reason, l, offset);
  if (l.propsLength === 0) return null;
  return string2messageProperties(b.toString('utf8', l.propsStart, l.propsStart + l.propsLength));
}

/** What the dispatch (reput) step needs from a record (RocketMQ's DispatchRequest). */
export interface RecordFields {
  /** TOTALSIZE. */
  size: number;
  topic: string;
  queueId: number;
  flag: number;
  queueOffset: number;
  commitLogOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  storeTimestamp: number;
  bodyCRC: number;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  /** `null` when the record has no properties. */
  properties: Record<string, string> | null;
  /** The TAGS property, or null. */
  tags: string | null;
  /** Consume-queue tags code: Java `String.hashCode` of TAGS, 0 without a tag. */
  tagsCode: number;
  /** KEYS, or "" (RocketMQ's DispatchRequest default). */
  keys: string;
  /** UNIQ_KEY, or null. */
  uniqKey: string | null;
  /** Where the body starts in `buffer`, and its stored length. */
  bodyOffset: number;
  bodyLength: number;
}

const peekLayout = newLayout();

function int64At(b: Uint8Array, p: number, field: string): number {
  const v = readInt64(b, p);
  if (Number.isNaN(v)) throw new DecodeError(`${field} is beyond ±(2^53 - 1)`, p);
  return v;
}

/**
 * Reads the header fields, topic and properties of the record at `offset` without copying the body (for
 * the store's dispatch). Throws DecodeError on a malformed record.
 */
export function peekRecordFields(buffer: Uint8Array, offset = 0): RecordFields {
  const l = peekLayout;
  const b = asBuffer(buffer);
  const reason = scanRecord(b, offset, l);
  if (reason !== null) fail(reason === 'blank' ? 'blank (end-of-file) record' : reason, l, offset);
  const properties =
    l.propsLength > 0 ? string2messageProperties(b.toString('utf8', l.propsStart, l.propsStart + l.propsLength)) : null;
  const tags = properties?.TAGS ?? null;
  const storeTsPos = offset + 48 + l.bornLength + 4;
  const afterStoreHost = storeTsPos + 8 + l.storeLength + 4;
  return {
    size: l.totalSize,
    topic: b.toString('utf8', l.topicStart, l.topicStart + l.topicLength),
    queueId: readInt32(b, offset + 12),
    flag: readInt32(b, offset + 16),
    queueOffset: int64At(b, offset + 20, 'queueOffset'),
    commitLogOffset: int64At(b, offset + 28, 'commitLogOffset'),
    sysFlag: l.sysFlag,
    bornTimestamp: int64At(b, offset + 40, 'bornTimestamp'),
    storeTimestamp: int64At(b, storeTsPos, 'storeTimestamp'),
    bodyCRC: readInt32(b, offset + 8),
    reconsumeTimes: readInt32(b, afterStoreHost),
    preparedTransactionOffset: int64At(b, afterStoreHost + 4, 'preparedTransactionOffset'),
    properties,
    tags,
    tagsCode: tagsHashCode(tags),
    keys: properties?.KEYS ?? '',
    uniqKey: properties?.UNIQ_KEY ?? null,
    bodyOffset: l.bodyStart,
    bodyLength: l.bodyLength,
  };
}
