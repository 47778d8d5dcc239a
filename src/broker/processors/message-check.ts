/**
 * What SEND_MESSAGE checks in a message beyond RocketMQ's msgCheck: the sysFlag a producer sent and,
 * for a compressed message, that its body really decompresses. RocketMQ stores any sysFlag; a message
 * flagged compressed whose body is not then fails to decode in every consumer that pulls it, and blocks
 * the queue. Such a message is refused at the door with MESSAGE_ILLEGAL instead.
 */
import { CompressionType, DEFAULT_MAX_DECOMPRESSED_BYTES, MessageSysFlag } from '../../common/codec/constants.js';
import { decompressBody } from '../../common/codec/compression.js';
import { zstdDecompressedSize } from '../../common/codec/zstd.js';
import { checkInflatedSize } from './inflate-check.js';
import { STORED_SYSFLAG_BITS } from '../../store/record-check.js';
import { STORE_DEFAULTS } from '../../store/index.js';
import type { BrokerContext } from '../broker-context.js';

/** The largest body the store takes (its maxMessageSize): a compressed body may not expand past it either. */
export const maxBodyBytes = (ctx: BrokerContext): number =>
  ctx.brokerConfig.store.maxMessageSize ?? STORE_DEFAULTS.maxMessageSize;

/** sysFlag bits a producer may send: compression, multi-tags, the transaction type, the host-address kinds, the compression type. */
const PRODUCER_BITS = STORED_SYSFLAG_BITS;

const hex = (n: number): string => `0x${(n >>> 0).toString(16)}`;

/**
 * Why a producer's sysFlag is refused, or null. Refused: bits RocketMQ does not define or that this broker
 * does not serve (NEED_UNWRAP, INNER_BATCH), a compression type without the COMPRESSED flag, and a
 * transaction type other than none — except PREPARED on a single message that carries `TRAN_MSG=true`
 * (`halfMessage`), which becomes a half message; COMMIT / ROLLBACK come only with END_TRANSACTION, and a
 * prepared record without TRAN_MSG would be stored where no consumer ever sees it.
 */
export function sysFlagProblem(sysFlag: number, halfMessage = false): string | null {
  const unknown = sysFlag & ~PRODUCER_BITS;
  if (unknown !== 0) return `sysFlag ${hex(sysFlag)} has bits this broker does not accept (${hex(unknown)})`;
  const compressed = (sysFlag & MessageSysFlag.COMPRESSED_FLAG) !== 0;
  if (!compressed && (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) !== 0) {
    return `sysFlag ${hex(sysFlag)} names a compression type without the COMPRESSED flag`;
  }
  const tranType = sysFlag & MessageSysFlag.TRANSACTION_MASK;
  if (tranType === MessageSysFlag.TRANSACTION_PREPARED_TYPE && halfMessage) return null;
  if (tranType !== MessageSysFlag.TRANSACTION_NOT_TYPE) {
    return `sysFlag ${hex(sysFlag)} marks a transaction message without TRAN_MSG=true on a single message`;
  }
  return null;
}

const LZ4_FRAME_MAGIC = 0x184d2204;
const LZ4_BLOCK_MAX_SIZES = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

/**
 * The decompressed size of an LZ4 body, read from its frames' declared content sizes or counted from its
 * blocks' sequences (literal and match lengths) without producing any output: a pass over the compressed
 * bytes, so a bomb is measured in the time it takes to read it. -1 when the body is not plain LZ4 frames
 * (skippable frames, dictionaries, bad magic...): the decoder then says what is wrong, within its limit.
 * Counting stops as soon as the total passes `limit` (the answer is then some size past it), so a bomb
 * costs the part of its bytes that expands to the limit.
 */
export function lz4DecompressedSize(body: Uint8Array, limit = Infinity): number {
  let p = 0;
  let total = 0;
  const le32 = (at: number): number =>
    ((body[at] as number) | ((body[at + 1] as number) << 8) | ((body[at + 2] as number) << 16)) +
    (body[at + 3] as number) * 0x1000000;
  while (p < body.length) {
    if (p + 7 > body.length || le32(p) !== LZ4_FRAME_MAGIC) return -1;
    const flg = body[p + 4] as number;
    const bd = body[p + 5] as number;
    if ((flg & 0x01) !== 0 || !LZ4_BLOCK_MAX_SIZES[bd >>> 4]) return -1;
    const blockChecksum = (flg & 0x10) !== 0;
    if ((flg & 0x08) !== 0) {
      if (p + 14 > body.length) return -1;
      // A declared size the blocks contradict is refused by the decoder.
      total += le32(p + 6) + le32(p + 10) * 4294967296;
      if (total > limit) return total;
    }
    p += 4 + 2 + ((flg & 0x08) !== 0 ? 8 : 0) + 1;
    let counted = 0;
    for (;;) {
      if (p + 4 > body.length) return -1;
      const word = le32(p);
      p += 4;
      if (word === 0) break;
      const size = word & 0x7fffffff;
      if (p + size > body.length) return -1;
      counted += word >= 0x80000000 ? size : lz4BlockOutput(body, p, p + size, limit - total - counted);
      if (total + counted > limit) return total + counted;
      p += size + (blockChecksum ? 4 : 0);
    }
    if ((flg & 0x08) === 0) total += counted;
    if (total > limit) return total;
    if ((flg & 0x04) !== 0) p += 4;
  }
  return total;
}

/**
 * Output length of one LZ4 block: its literals plus its matches, read from the sequences' tokens; once
 * past `limit`, some length past it.
 */
function lz4BlockOutput(b: Uint8Array, start: number, end: number, limit: number): number {
  let p = start;
  let out = 0;
  while (p < end && out <= limit) {
    const token = b[p++] as number;
    let literals = token >>> 4;
    if (literals === 15) {
      let x = 255;
      while (x === 255 && p < end) literals += x = b[p++] as number;
    }
    out += literals;
    p += literals;
    if (p >= end) break; // the last sequence has literals only
    p += 2; // match offset
    let match = token & 15;
    if (match === 15) {
      let x = 255;
      while (x === 255 && p < end) match += x = b[p++] as number;
    }
    out += match + 4;
  }
  return out;
}

/** Lets the event loop serve others before the caller goes on. */
const nextTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Why a body flagged compressed is refused, or null when it decompresses (with the compression type of
 * `sysFlag`, 0 meaning zlib) to at most `maxDecompressedBytes` (the broker passes the store's
 * maxMessageSize). The size is bounded before any work: an LZ4 body's is counted from its sequences; a
 * zstd body's declared sizes are checked first and its decoding, which stops at the limit, runs in slices
 * between which other calls are served; zlib is inflated on a worker thread, up to the limit. Neither
 * output is kept, so a large body neither stalls other calls nor holds memory.
 */
export async function compressedBodyProblem(
  body: Buffer,
  sysFlag: number,
  maxDecompressedBytes = DEFAULT_MAX_DECOMPRESSED_BYTES,
): Promise<string | null> {
  // An empty body is never decompressed by consumers.
  if ((sysFlag & MessageSysFlag.COMPRESSED_FLAG) === 0 || body.length === 0) return null;
  const bits = (sysFlag & MessageSysFlag.COMPRESSION_TYPE_MASK) >> 8;
  const type = bits === 0 ? CompressionType.ZLIB : bits;
  try {
    if (type === CompressionType.ZLIB) await checkInflatedSize(body, maxDecompressedBytes);
    else if (type === CompressionType.ZSTD) await zstdDecompressedSize(body, maxDecompressedBytes, nextTurn);
    else {
      if (type === CompressionType.LZ4 && lz4DecompressedSize(body, maxDecompressedBytes) > maxDecompressedBytes) {
        return `the compressed body expands past ${maxDecompressedBytes} bytes`;
      }
      decompressBody(body, type, maxDecompressedBytes);
    }
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_BUFFER_TOO_LARGE' || /larger than|exceeds/i.test(err.message)) {
      return `the compressed body expands past ${maxDecompressedBytes} bytes`;
    }
    return `the body is flagged compressed but does not decompress: ${err.message}`;
  }
}
