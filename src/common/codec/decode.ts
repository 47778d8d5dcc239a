/**
 * Decoding stored-message records into `MessageExt` (byte table in constants.ts). RocketMQ:
 * MessageDecoder.decode / clientDecode / decodes.
 *
 * Differences from RocketMQ, on purpose: RocketMQ's `decodes` silently stops at the first broken record;
 * `decodeMessages` throws a DecodeError carrying the byte position instead, so a corrupt or truncated
 * pull body is never mistaken for a short one. Records are framed by TOTALSIZE: zero padding after the
 * properties (an encode with a larger `storeSize`) is skipped, fields running past TOTALSIZE are an error.
 *
 * Bodies are COPIES, never views of the caller's buffer, so the caller may reuse or overwrite it.
 * `decodeMessages` makes one private copy of the input and hands out each body as a view of it (one
 * allocation per pull body); keeping any one body keeps that copy (about the pull body's size) alive,
 * as Node's own 8 KiB pool does for small buffers. Decompressed bodies are fresh buffers. A caller that
 * owns the input and never reuses it (the client's pull response) may ask for `bodyViews` instead.
 */
import type { HostAddress, MessageExt } from '../message.js';
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { hex32, hex64, readInt32, readInt64 } from './bytes.js';
import { CompressionError, decompressBody } from './compression.js';
import { DEFAULT_MAX_DECOMPRESSED_BYTES, MessageSysFlag, compressionTypeOf } from './constants.js';
import { ipv4ToString, ipv6ToString, isIPv4Mapped } from './hosts.js';
import { string2messageProperties } from './properties.js';
import { crc32Masked, newLayout, scanRecord, type RecordLayout } from './record-scan.js';

export interface DecodeOptions {
  /** Inflate compressed bodies and clear COMPRESSED_FLAG in the exposed sysFlag (RocketMQ's default). Default true. */
  decompressBody?: boolean;
  /** Read the body; when false `body` is null and nothing is decompressed. Default true. */
  readBody?: boolean;
  /** Verify BODYCRC against the stored body (RocketMQ's client default is off). Default false. */
  checkCRC?: boolean;
  /** Decompression-bomb guard: largest decompressed body accepted, bytes. Default 64 MiB. */
  maxDecompressedBytes?: number;
  /**
   * `decodeMessages` only: bodies are views of the input itself rather than of a private copy of it,
   * which spares one allocation and one copy of the whole input. Only for an input the caller owns and
   * will never reuse or change (a pull response received into a fresh buffer). Default false.
   */
  bodyViews?: boolean;
}

interface ResolvedOptions {
  decompress: boolean;
  readBody: boolean;
  checkCRC: boolean;
  maxDecompressed: number;
  bodyViews: boolean;
}

const DEFAULTS: ResolvedOptions = Object.freeze({
  decompress: true,
  readBody: true,
  checkCRC: false,
  maxDecompressed: DEFAULT_MAX_DECOMPRESSED_BYTES,
  bodyViews: false,
});

function resolve(options: DecodeOptions | undefined): ResolvedOptions {
  if (options === undefined) return DEFAULTS;
  const max = options.maxDecompressedBytes ?? DEFAULT_MAX_DECOMPRESSED_BYTES;
  if (!Number.isSafeInteger(max) || max < 0) {
    throw new InvalidArgumentError('maxDecompressedBytes', 'must be a non-negative integer');
  }
  return {
    decompress: options.decompressBody ?? true,
    readBody: options.readBody ?? true,
    checkCRC: options.checkCRC ?? false,
    maxDecompressed: max,
    bodyViews: options.bodyViews ?? false,
  };
}

function asBuffer(b: unknown): Buffer {
  if (Buffer.isBuffer(b)) return b;
  if (b instanceof Uint8Array) return Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  throw new InvalidArgumentError('buffer', 'must be a Buffer or Uint8Array');
}

// Small caches for values that repeat across the records of one pull body.
const ipv4Cache = new Map<number, string>();
let lastTopicBytes = new Uint8Array(0);
let lastTopic = '';

function ipv4At(b: Buffer, p: number): string {
  const key = readInt32(b, p);
  let s = ipv4Cache.get(key);
  if (s === undefined) {
    s = ipv4ToString(b, p);
    if (ipv4Cache.size >= 4096) ipv4Cache.clear();
    ipv4Cache.set(key, s);
  }
  return s;
}

/**
 * The first 16 hex digits of an offset message id (store IPv4 address and port), by address and port:
 * the same for every record a broker stores, so only the commit-log offset is formatted per record.
 */
const storePrefixCache = new Map<number, string>();

function storeIdPrefix(b: Buffer, p: number, port: number): string {
  const key = (readInt32(b, p) >>> 0) * 65536 + port;
  let s = storePrefixCache.get(key);
  if (s === undefined) {
    s = hex32(readInt32(b, p)) + hex32(port);
    if (storePrefixCache.size >= 4096) storePrefixCache.clear();
    storePrefixCache.set(key, s);
  }
  return s;
}

function topicAt(b: Buffer, start: number, length: number): string {
  const cached = lastTopicBytes;
  if (cached.length === length) {
    let same = true;
    for (let i = 0; i < length; i++) {
      if (cached[i] !== b[start + i]) {
        same = false;
        break;
      }
    }
    if (same) return lastTopic;
  }
  const topic = b.toString('utf8', start, start + length);
  if (length <= 256) {
    lastTopicBytes = new Uint8Array(b.subarray(start, start + length)); // a copy: the input may be reused
    lastTopic = topic;
  }
  return topic;
}

function int64(b: Buffer, p: number, field: string, recordOffset: number): number {
  const v = readInt64(b, p);
  if (Number.isNaN(v)) throw new DecodeError(`record at ${recordOffset}: ${field} is beyond ±(2^53 - 1)`, p);
  return v;
}

function port(b: Buffer, p: number, field: string, recordOffset: number): number {
  const v = readInt32(b, p);
  // RocketMQ: InetSocketAddress refuses a port outside 0-65535, so the decode fails.
  if (v < 0 || v > 65535) throw new DecodeError(`record at ${recordOffset}: ${field} port ${v} out of range`, p);
  return v;
}

const layout: RecordLayout = newLayout();

/**
 * Bodies of one `decodeMessages` call are views of ONE private copy of the input, made when the first
 * body is needed: one allocation and one memcpy per pull body instead of one per message, which is
 * far cheaper for small bodies. Never a view of the caller's buffer.
 */
interface BodyCopy {
  copy: Buffer | null;
  /** Position in the input where `copy` starts. */
  base: number;
}

function copyBody(b: Buffer, start: number, length: number, shared: BodyCopy | null, recordStart: number): Buffer {
  if (shared === null) {
    const body = Buffer.allocUnsafe(length);
    body.set(b.subarray(start, start + length)); // cheaper than Buffer#copy for small bodies
    return body;
  }
  if (shared.copy === null) {
    shared.copy = Buffer.from(b.subarray(recordStart));
    shared.base = recordStart;
  }
  const at = start - shared.base;
  return shared.copy.subarray(at, at + length);
}

/** Decodes the record at `p` whose layout `l` was scanned. */
function build(b: Buffer, p: number, l: RecordLayout, o: ResolvedOptions, shared: BodyCopy | null): MessageExt {
  const queueOffset = int64(b, p + 20, 'queueOffset', p);
  const commitLogOffset = int64(b, p + 28, 'commitLogOffset', p);
  const bornTimestamp = int64(b, p + 40, 'bornTimestamp', p);
  let q = p + 48;
  const bornIp = l.bornLength === 4 ? ipv4At(b, q) : ipv6ToString(b, q);
  q += l.bornLength;
  const bornHost: HostAddress = { ip: bornIp, port: port(b, q, 'bornHost', p) };
  q += 4;
  const storeTimestamp = int64(b, q, 'storeTimestamp', p);
  q += 8;
  const storeAddr = q;
  const storeIp = l.storeLength === 4 ? ipv4At(b, q) : ipv6ToString(b, q);
  q += l.storeLength;
  const storePort = port(b, q, 'storeHost', p);
  q += 4;
  const reconsumeTimes = readInt32(b, q);
  const preparedTransactionOffset = int64(b, q + 4, 'preparedTransactionOffset', p);
  const bodyCRC = readInt32(b, p + 8);
  let sysFlag = l.sysFlag;

  let body: Buffer | null = null;
  if (l.bodyLength > 0 && o.readBody) {
    if (o.checkCRC && crc32Masked(b, l.bodyStart, l.bodyLength) !== bodyCRC) {
      throw new DecodeError(`record at ${p}: body CRC mismatch`, p + 8);
    }
    if (o.decompress && (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0) {
      try {
        body = decompressBody(
          b.subarray(l.bodyStart, l.bodyStart + l.bodyLength),
          compressionTypeOf(sysFlag),
          o.maxDecompressed,
        );
      } catch (e) {
        if (e instanceof CompressionError) {
          throw new DecodeError(`record at ${p}: ${e.message}`, l.bodyStart, { cause: e });
        }
        throw e;
      }
      sysFlag &= ~MessageSysFlag.COMPRESSED_FLAG; // RocketMQ: the exposed sysFlag loses COMPRESSED_FLAG
      if (body.length === 0) body = null;
    } else {
      body = copyBody(b, l.bodyStart, l.bodyLength, shared, p);
    }
  }

  const topic = topicAt(b, l.topicStart, l.topicLength);
  const properties =
    l.propsLength > 0 ? string2messageProperties(b.toString('utf8', l.propsStart, l.propsStart + l.propsLength)) : null;

  // Offset message id: store address bytes, port, commit-log offset. RocketMQ: a 16-byte IPv4-mapped
  // address decodes as IPv4, its 8 bytes are written into a 28-byte id buffer, leaving 12 zero bytes.
  let offsetMsgId: string;
  if (l.storeLength === 4) {
    offsetMsgId = storeIdPrefix(b, storeAddr, storePort) + hex64(commitLogOffset);
  } else if (isIPv4Mapped(b, storeAddr)) {
    offsetMsgId =
      hex32(readInt32(b, storeAddr + 12)) + hex32(storePort) + hex64(commitLogOffset) + '000000000000000000000000';
  } else {
    offsetMsgId =
      hex32(readInt32(b, storeAddr)) +
      hex32(readInt32(b, storeAddr + 4)) +
      hex32(readInt32(b, storeAddr + 8)) +
      hex32(readInt32(b, storeAddr + 12)) +
      hex32(storePort) +
      hex64(commitLogOffset);
  }
  const uniqKey = properties === null ? undefined : properties.UNIQ_KEY;

  return {
    topic,
    flag: readInt32(b, p + 16),
    body,
    properties,
    queueId: readInt32(b, p + 12),
    queueOffset,
    commitLogOffset,
    sysFlag,
    bornTimestamp,
    bornHost,
    storeTimestamp,
    storeHost: { ip: storeIp, port: storePort },
    reconsumeTimes,
    preparedTransactionOffset,
    bodyCRC,
    storeSize: l.totalSize,
    // RocketMQ: MessageClientExt.getMsgId is UNIQ_KEY when present, else the offset message id.
    msgId: typeof uniqKey === 'string' ? uniqKey : offsetMsgId,
    offsetMsgId,
  };
}

function decodeAt(b: Buffer, p: number, o: ResolvedOptions, shared: BodyCopy | null): MessageExt {
  const l = layout;
  const reason = scanRecord(b, p, l);
  if (reason !== null) {
    throw new DecodeError(
      `record at ${p}: ${reason === 'blank' ? 'blank (end-of-file) record' : reason}`,
      l.errorPosition,
    );
  }
  return buildChecked(b, p, l, o, shared);
}

/** `build`, any failure a DecodeError naming the record. */
function buildChecked(b: Buffer, p: number, l: RecordLayout, o: ResolvedOptions, shared: BodyCopy | null): MessageExt {
  try {
    return build(b, p, l, o, shared);
  } catch (e) {
    if (e instanceof DecodeError) throw e;
    throw new DecodeError(`record at ${p}: ${(e as Error)?.message ?? String(e)}`, p, { cause: e });
  }
}

/**
 * `decodeMessage(buffer, offset, options).message` for a record whose layout `l` was already found (a
 * `checkRecordHeader` of the same, unchanged bytes, or `layoutFromLengths` from what it found): the
 * header is not scanned again. Throws DecodeError only for what the check leaves open (a body that
 * cannot be decompressed, a CRC mismatch when asked to check).
 */
export function decodeLaidOut(buffer: Buffer, offset: number, l: RecordLayout, options?: DecodeOptions): MessageExt {
  return buildChecked(buffer, offset, l, resolve(options), null);
}

/**
 * Scans the record at `offset` into `l` and checks every header field the decoder reads: `null` when
 * `decodeMessage(buffer, offset, { decompressBody: false })` will succeed (only a compressed body can
 * still fail to decode), else the reason. Allocates nothing.
 */
export function checkRecordHeader(buffer: Uint8Array, offset: number, l: RecordLayout): string | null {
  const reason = scanRecord(buffer, offset, l);
  if (reason !== null) return reason === 'blank' ? 'blank (end-of-file) record' : reason;
  const bornPort = offset + 48 + l.bornLength;
  const storeTimestamp = bornPort + 4;
  const storePort = storeTimestamp + 8 + l.storeLength;
  const prepared = storePort + 8;
  if (Number.isNaN(readInt64(buffer, offset + 20))) return 'queueOffset is beyond ±(2^53 - 1)';
  if (Number.isNaN(readInt64(buffer, offset + 28))) return 'commitLogOffset is beyond ±(2^53 - 1)';
  if (Number.isNaN(readInt64(buffer, offset + 40))) return 'bornTimestamp is beyond ±(2^53 - 1)';
  if (Number.isNaN(readInt64(buffer, storeTimestamp))) return 'storeTimestamp is beyond ±(2^53 - 1)';
  if (Number.isNaN(readInt64(buffer, prepared))) return 'preparedTransactionOffset is beyond ±(2^53 - 1)';
  const bp = readInt32(buffer, bornPort);
  if (bp < 0 || bp > 65535) return `bornHost port ${bp} out of range`;
  const sp = readInt32(buffer, storePort);
  if (sp < 0 || sp > 65535) return `storeHost port ${sp} out of range`;
  return null;
}

/** Decodes the one record at `offset`; `size` is its TOTALSIZE. Throws DecodeError. */
export function decodeMessage(
  buffer: Buffer | Uint8Array,
  offset = 0,
  options?: DecodeOptions,
): { message: MessageExt; size: number } {
  const b = asBuffer(buffer);
  const o = resolve(options);
  const message = decodeAt(b, offset, o, null);
  return { message, size: layout.totalSize };
}

/**
 * Decodes records back to back until the buffer ends (a PULL_MESSAGE body). An empty buffer gives [].
 * A corrupt or truncated record throws DecodeError with the byte position; nothing past the buffer is
 * read.
 */
export function decodeMessages(buffer: Buffer | Uint8Array, options?: DecodeOptions): MessageExt[] {
  const b = asBuffer(buffer);
  const o = resolve(options);
  const out: MessageExt[] = [];
  const shared: BodyCopy = o.bodyViews ? { copy: b, base: 0 } : { copy: null, base: 0 };
  let p = 0;
  while (p < b.length) {
    out.push(decodeAt(b, p, o, shared));
    p += layout.totalSize;
  }
  return out;
}
