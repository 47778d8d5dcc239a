/**
 * What SEND_MESSAGE checks in a message beyond RocketMQ's msgCheck: the sysFlag a producer sent and,
 * for a compressed message, that its body really decompresses. RocketMQ stores any sysFlag; a message
 * flagged compressed whose body is not then fails to decode in every consumer that pulls it, and blocks
 * the queue. Such a message is refused at the door with MESSAGE_ILLEGAL instead.
 */
import { createInflate } from 'node:zlib';
import { CompressionType, DEFAULT_MAX_DECOMPRESSED_BYTES, MessageSysFlag } from '../../common/codec/constants.js';
import { decompressBody } from '../../common/codec/compression.js';
import { STORED_SYSFLAG_BITS } from '../../store/record-check.js';

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

/**
 * The decompressed size of a zlib body, counted as the inflater produces it and thrown away, so checking a
 * bomb costs one chunk of memory rather than the whole output; rejects past `maxOutputLength`.
 */
function inflatedSize(body: Buffer, maxOutputLength: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const inflater = createInflate({ chunkSize: 256 * 1024 });
    let size = 0;
    let done = false;
    const finish = (err: Error | null): void => {
      if (done) return;
      done = true;
      if (err) reject(err);
      else resolve(size);
    };
    inflater.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxOutputLength) {
        finish(Object.assign(new Error(`larger than ${maxOutputLength} bytes`), { code: 'ERR_BUFFER_TOO_LARGE' }));
        inflater.destroy();
      }
    });
    inflater.on('end', () => finish(null));
    inflater.on('error', (e) => finish(e));
    inflater.end(body);
  });
}

/**
 * Why a body flagged compressed is refused, or null when it decompresses (with the compression type of
 * `sysFlag`, 0 meaning zlib) to at most `maxDecompressedBytes` — the limit consumers decode with by default.
 * zlib runs on the thread pool and its output is counted, not kept, so a large body neither stalls other
 * calls nor holds memory.
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
    if (type === CompressionType.ZLIB) await inflatedSize(body, maxDecompressedBytes);
    else decompressBody(body, type, maxDecompressedBytes);
    return null;
  } catch (e) {
    const err = e as NodeJS.ErrnoException;
    if (err.code === 'ERR_BUFFER_TOO_LARGE' || /larger than|exceeds/i.test(err.message)) {
      return `the compressed body expands past ${maxDecompressedBytes} bytes`;
    }
    return `the body is flagged compressed but does not decompress: ${err.message}`;
  }
}
