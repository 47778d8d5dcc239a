/**
 * Encoding stored-message records (byte table in constants.ts).
 *
 * - `encodeMessage`: RocketMQ's `MessageDecoder.encode(msg, needCompress)` byte for byte (V1 unless
 *   asked for V2; the given bodyCRC; an explicit `storeSize` pads with zeros).
 * - `encodeStoredMessage`: what the store appends (RocketMQ's MessageExtEncoder + CommitLog): V2 when the
 *   topic is longer than 127 chars, body CRC computed from the stored body, offsets and store time
 *   written; one `Buffer.allocUnsafe` and no intermediate copies.
 */
import { crc32 } from 'node:zlib';
import type { HostAddress } from '../message.js';
import { InvalidArgumentError } from '../errors.js';
import { isInt32Like, writeInt16, writeInt32, writeInt64 } from './bytes.js';
import { CompressionError, compressBody } from './compression.js';
import {
  BLANK_MAGIC_CODE,
  BLANK_RECORD_LENGTH,
  MAGIC_CODE_V1,
  MAGIC_CODE_V2,
  MAX_PROPERTIES_BYTES,
  MAX_TOPIC_BYTES_V1,
  MAX_TOPIC_BYTES_V2,
  MessageSysFlag,
  POS_PHYSICAL_OFFSET,
  POS_QUEUE_OFFSET,
  POS_SYSFLAG,
  compressionTypeOf,
  storeTimestampPosition,
  storedRecordLength,
} from './constants.js';
import { javaUtf8RoundTrip } from './java-string.js';
import { checkSafeInteger, hostBytes } from './message-id.js';
import { messageProperties2String, type PropertiesInput } from './properties.js';

/** A message to encode with `encodeMessage`; a decoded `MessageExt` is one. Missing numbers are 0. */
export interface EncodableMessage {
  topic: string;
  body: Uint8Array | null;
  bornHost: HostAddress;
  storeHost: HostAddress;
  flag?: number;
  properties?: PropertiesInput | null;
  queueId?: number;
  queueOffset?: number;
  commitLogOffset?: number;
  sysFlag?: number;
  bornTimestamp?: number;
  storeTimestamp?: number;
  reconsumeTimes?: number;
  preparedTransactionOffset?: number;
  /** Written as given (RocketMQ does); computed from the stored body when missing. */
  bodyCRC?: number;
  /** When > 0, the record is this long, zero-padded (RocketMQ's encode allocates `storeSize`). */
  storeSize?: number;
}

export interface EncodeOptions {
  /**
   * Compress the body (RocketMQ's `needCompress`): sets COMPRESSED_FLAG and compresses with the type in
   * sysFlag bits 8-10 (0 or 3 zlib level 5, 1 LZ4 frame; zstd is refused: it is decoded only). Default false: the body is
   * written as given, even when sysFlag already says it is compressed.
   */
  compress?: boolean;
  /** Record version: 1 (RocketMQ's encode, default) or 2 (2-byte topic length). */
  version?: 1 | 2;
}

/** What the store appends: a message as received, plus its place in the log. */
export interface StoredMessageInput {
  topic: string;
  /** The body as it is to be stored (already compressed when sysFlag says so). */
  body: Uint8Array | null;
  queueId: number;
  bornTimestamp: number;
  bornHost: HostAddress;
  storeHost: HostAddress;
  flag?: number;
  properties?: PropertiesInput | null;
  /** The joined properties string; takes precedence over `properties` (saves a join when the broker has it). */
  propertiesString?: string;
  /** Default 0; can also be written later with `setStoredRecordFields`. */
  queueOffset?: number;
  /** Default 0; can also be written later with `setStoredRecordFields`. */
  commitLogOffset?: number;
  /** Default 0. The IPv6 host bits (0x10, 0x20) are set from the hosts. */
  sysFlag?: number;
  /** Default 0; can also be written later with `setStoredRecordFields`. */
  storeTimestamp?: number;
  reconsumeTimes?: number;
  preparedTransactionOffset?: number;
}

const hostCache = new Map<string, Uint8Array>();

const ANY_SURROGATE = /[\uD800-\uDFFF]/;
/** Java's UTF-8 view of `s` (unpaired surrogates become `?`), skipping the pairing check when there are none. */
const javaSafe = (s: string): string => (ANY_SURROGATE.test(s) ? javaUtf8RoundTrip(s) : s);

function addressOf(host: HostAddress, field: string): Uint8Array {
  const cached = host && typeof host.ip === 'string' ? hostCache.get(host.ip) : undefined;
  if (cached) {
    if (typeof host.port !== 'number' || !Number.isInteger(host.port) || host.port < 0 || host.port > 65535) {
      return hostBytes(host, field); // throws the port error
    }
    return cached;
  }
  const bytes = hostBytes(host, field);
  if (hostCache.size >= 1024) hostCache.clear();
  hostCache.set(host.ip, bytes);
  return bytes;
}

function int32(v: number | undefined, field: string): number {
  if (v === undefined) return 0;
  if (!isInt32Like(v)) throw new InvalidArgumentError(field, `must be a 32-bit integer, got ${String(v)}`);
  return v;
}

function int64(v: number | undefined, field: string): number {
  if (v === undefined) return 0;
  checkSafeInteger(v, field);
  return v;
}

/** Sets or clears the IPv6 host bits of `sysFlag` to match the address lengths (as the broker does). */
function withHostFlags(sysFlag: number, born: Uint8Array, store: Uint8Array): number {
  let f = sysFlag & ~(MessageSysFlag.BORNHOST_V6_FLAG | MessageSysFlag.STOREHOSTADDRESS_V6_FLAG);
  if (born.length === 16) f |= MessageSysFlag.BORNHOST_V6_FLAG;
  if (store.length === 16) f |= MessageSysFlag.STOREHOSTADDRESS_V6_FLAG;
  return f;
}

/** CRC32 of the body masked to 31 bits (RocketMQ's UtilAll.crc32); 0 for no body. */
export function bodyCrc32(body: Uint8Array | null): number {
  return body && body.length > 0 ? crc32(body) & 0x7fffffff : 0;
}

interface Layout {
  version: 1 | 2;
  sysFlag: number;
  born: Uint8Array;
  store: Uint8Array;
  body: Uint8Array | null;
  topic: string;
  topicLength: number;
  props: string;
  propsLength: number;
}

/** Writes every field; `b` has at least `storedRecordLength(...)` bytes from `p`. */
function writeRecord(
  b: Buffer,
  p: number,
  totalSize: number,
  l: Layout,
  m: EncodableMessage | StoredMessageInput,
  bodyCRC: number,
): void {
  const bodyLength = l.body ? l.body.length : 0;
  writeInt32(b, p, totalSize);
  writeInt32(b, p + 4, l.version === 1 ? MAGIC_CODE_V1 : MAGIC_CODE_V2);
  writeInt32(b, p + 8, bodyCRC);
  writeInt32(b, p + 12, int32(m.queueId, 'queueId'));
  writeInt32(b, p + 16, int32(m.flag, 'flag'));
  writeInt64(b, p + 20, int64(m.queueOffset, 'queueOffset'));
  writeInt64(b, p + 28, int64(m.commitLogOffset, 'commitLogOffset'));
  writeInt32(b, p + 36, l.sysFlag);
  writeInt64(b, p + 40, int64(m.bornTimestamp, 'bornTimestamp'));
  let q = p + 48;
  b.set(l.born, q);
  q += l.born.length;
  writeInt32(b, q, m.bornHost.port);
  writeInt64(b, q + 4, int64(m.storeTimestamp, 'storeTimestamp'));
  q += 12;
  b.set(l.store, q);
  q += l.store.length;
  writeInt32(b, q, m.storeHost.port);
  writeInt32(b, q + 4, int32(m.reconsumeTimes, 'reconsumeTimes'));
  writeInt64(b, q + 8, int64(m.preparedTransactionOffset, 'preparedTransactionOffset'));
  q += 16;
  writeInt32(b, q, bodyLength);
  q += 4;
  if (l.body && bodyLength > 0) b.set(l.body, q);
  q += bodyLength;
  if (l.version === 1) b[q++] = l.topicLength;
  else {
    writeInt16(b, q, l.topicLength);
    q += 2;
  }
  if (l.topicLength > 0) b.write(l.topic, q, l.topicLength, 'utf8');
  q += l.topicLength;
  writeInt16(b, q, l.propsLength);
  q += 2;
  if (l.propsLength > 0) b.write(l.props, q, l.propsLength, 'utf8');
}

function checkBody(body: unknown): Uint8Array | null {
  if (body === null || body === undefined) return null;
  if (!(body instanceof Uint8Array)) throw new InvalidArgumentError('body', 'must be a Buffer, a Uint8Array or null');
  return body;
}

function layout(
  m: EncodableMessage | StoredMessageInput,
  version: 1 | 2 | 'auto',
  sysFlagIn: number,
  body: Uint8Array | null,
  propsString: string,
): Layout {
  if (typeof m.topic !== 'string') throw new InvalidArgumentError('topic', 'must be a string');
  const born = addressOf(m.bornHost, 'bornHost');
  const store = addressOf(m.storeHost, 'storeHost');
  const topic = javaSafe(m.topic);
  const topicLength = Buffer.byteLength(topic, 'utf8');
  // RocketMQ: CommitLog picks V2 when topic.length() > 127 (UTF-16 chars). A topic of <= 127 chars but
  // more than 127 UTF-8 bytes would be written corrupt by that rule; it gets V2 here.
  const v: 1 | 2 = version === 'auto' ? (m.topic.length > 127 || topicLength > 127 ? 2 : 1) : version;
  const maxTopic = v === 1 ? MAX_TOPIC_BYTES_V1 : MAX_TOPIC_BYTES_V2;
  if (topicLength > maxTopic) {
    throw new InvalidArgumentError('topic', `${topicLength} bytes is more than the ${maxTopic} a V${v} record holds`);
  }
  const props = javaSafe(propsString);
  const propsLength = Buffer.byteLength(props, 'utf8');
  // RocketMQ: PROPERTIES_SIZE_EXCEEDED when the properties string is longer than Short.MAX_VALUE bytes.
  if (propsLength > MAX_PROPERTIES_BYTES) {
    throw new InvalidArgumentError('properties', `${propsLength} bytes is more than ${MAX_PROPERTIES_BYTES}`);
  }
  return {
    version: v,
    sysFlag: withHostFlags(sysFlagIn, born, store),
    born,
    store,
    body,
    topic,
    topicLength,
    props,
    propsLength,
  };
}

/**
 * Encodes one stored-message record as RocketMQ's `MessageDecoder.encode` does. The IPv6 host bits of
 * sysFlag follow the host addresses. Throws InvalidArgumentError for a topic over 127 bytes (V1), properties
 * over 32767 bytes, a `storeSize` too small, a 64-bit field beyond ±(2^53 - 1), or a bad host.
 */
export function encodeMessage(msg: EncodableMessage, options: EncodeOptions = {}): Buffer {
  const version = options.version ?? 1;
  if (version !== 1 && version !== 2) throw new InvalidArgumentError('version', 'must be 1 or 2');
  let sysFlag = int32(msg.sysFlag, 'sysFlag') | 0;
  let body = checkBody(msg.body);
  if (options.compress) {
    sysFlag |= MessageSysFlag.COMPRESSED_FLAG;
    try {
      body = compressBody(body ?? new Uint8Array(0), compressionTypeOf(sysFlag));
    } catch (e) {
      if (e instanceof CompressionError) throw new InvalidArgumentError('sysFlag', e.message, { cause: e });
      throw e;
    }
  }
  const l = layout(msg, version, sysFlag, body, messageProperties2String(msg.properties));
  const needed = storedRecordLength(l.version, l.sysFlag, body ? body.length : 0, l.topicLength, l.propsLength);
  const storeSize = int32(msg.storeSize, 'storeSize');
  if (storeSize > 0 && storeSize < needed) {
    throw new InvalidArgumentError('storeSize', `${storeSize} is smaller than the ${needed} bytes the record needs`);
  }
  const total = storeSize > 0 ? storeSize : needed;
  const bodyCRC = msg.bodyCRC === undefined ? bodyCrc32(body) : int32(msg.bodyCRC, 'bodyCRC');
  const b = total > needed ? Buffer.alloc(total) : Buffer.allocUnsafe(total);
  writeRecord(b, 0, total, l, msg, bodyCRC);
  return b;
}

/**
 * Encodes the record the store appends: V1, or V2 for a topic over 127 chars; BODYCRC computed from the
 * body as stored; QUEUEOFFSET, PHYSICALOFFSET and STORETIMESTAMP as given (0 when missing, to be set
 * later with `setStoredRecordFields`). One allocation, fields written in place.
 */
export function encodeStoredMessage(msg: StoredMessageInput): Buffer {
  const body = checkBody(msg.body);
  const props = msg.propertiesString ?? messageProperties2String(msg.properties);
  const l = layout(msg, 'auto', int32(msg.sysFlag, 'sysFlag') | 0, body, props);
  const total = storedRecordLength(l.version, l.sysFlag, body ? body.length : 0, l.topicLength, l.propsLength);
  const b = Buffer.allocUnsafe(total);
  writeRecord(b, 0, total, l, msg, bodyCrc32(body));
  return b;
}

/**
 * Writes QUEUEOFFSET, PHYSICALOFFSET and/or STORETIMESTAMP into an encoded record at `p` (what CommitLog
 * fills in under its lock). The record's sysFlag locates STORETIMESTAMP.
 */
export function setStoredRecordFields(
  record: Uint8Array,
  p: number,
  fields: { queueOffset?: number; commitLogOffset?: number; storeTimestamp?: number },
): void {
  if (!Number.isInteger(p) || p < 0 || p + storeTimestampPosition(0x10) + 8 > record.length) {
    throw new InvalidArgumentError('offset', 'no record header at this offset');
  }
  if (fields.queueOffset !== undefined)
    writeInt64(record, p + POS_QUEUE_OFFSET, int64(fields.queueOffset, 'queueOffset'));
  if (fields.commitLogOffset !== undefined) {
    writeInt64(record, p + POS_PHYSICAL_OFFSET, int64(fields.commitLogOffset, 'commitLogOffset'));
  }
  if (fields.storeTimestamp !== undefined) {
    const sysFlag =
      ((record[p + POS_SYSFLAG] as number) << 24) |
      ((record[p + POS_SYSFLAG + 1] as number) << 16) |
      ((record[p + POS_SYSFLAG + 2] as number) << 8) |
      (record[p + POS_SYSFLAG + 3] as number);
    writeInt64(record, p + storeTimestampPosition(sysFlag), int64(fields.storeTimestamp, 'storeTimestamp'));
  }
}

/**
 * The end-of-file filler: `[int remaining][int BLANK_MAGIC_CODE]` written at `p`. `remaining` is the number of
 * bytes left in the segment from `p` (at least 8).
 */
export function writeBlankRecord(target: Uint8Array, p: number, remaining: number): void {
  if (!Number.isInteger(remaining) || remaining < BLANK_RECORD_LENGTH || remaining > 0x7fffffff) {
    throw new InvalidArgumentError('remaining', `must be an integer ${BLANK_RECORD_LENGTH}..2^31-1`);
  }
  if (!Number.isInteger(p) || p < 0 || p + BLANK_RECORD_LENGTH > target.length) {
    throw new InvalidArgumentError('offset', 'no room for the 8-byte filler');
  }
  writeInt32(target, p, remaining);
  writeInt32(target, p + 4, BLANK_MAGIC_CODE);
}
