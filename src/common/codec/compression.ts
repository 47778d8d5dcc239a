/**
 * Body compression by sysFlag compression type (RocketMQ's CompressorFactory): ZLIB (type 0 or 3) is
 * zlib-wrapped deflate at level 5 (java.util.zip), LZ4 (1) is the LZ4 frame format, ZSTD (2) a zstd
 * stream as RocketMQ 5 producers write it. ZSTD bodies are decoded (see zstd.ts); encoding with ZSTD is
 * refused (`unsupported compression: zstd`): producers here compress with zlib or LZ4.
 */
import { deflateSync, inflateSync } from 'node:zlib';
import { CompressionType } from './constants.js';
import { lz4FrameCompress, lz4FrameDecompress } from './lz4.js';
import { zstdDecompress } from './zstd.js';

/** Failure to (de)compress; the decoder turns it into a DecodeError, the encoder into an InvalidArgumentError. */
export class CompressionError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'CompressionError';
  }
}

function compressionName(type: number): string {
  switch (type) {
    case CompressionType.LZ4:
      return 'lz4';
    case CompressionType.ZSTD:
      return 'zstd';
    case CompressionType.ZLIB:
      return 'zlib';
    default:
      return `type ${type}`;
  }
}

/** Decompresses `body` with compression `type` (already mapped: 0 → ZLIB), output capped at `maxOutputLength`. */
export function decompressBody(body: Uint8Array, type: number, maxOutputLength: number): Buffer {
  switch (type) {
    case CompressionType.ZLIB:
      try {
        return inflateSync(body, { maxOutputLength });
      } catch (e) {
        throw new CompressionError(`zlib: ${(e as Error).message}`, { cause: e });
      }
    case CompressionType.LZ4:
      try {
        const out = lz4FrameDecompress(body, maxOutputLength);
        return Buffer.from(out.buffer, out.byteOffset, out.length);
      } catch (e) {
        throw new CompressionError(`lz4: ${(e as Error).message}`, { cause: e });
      }
    case CompressionType.ZSTD:
      try {
        const out = zstdDecompress(body, maxOutputLength);
        return Buffer.from(out.buffer, out.byteOffset, out.length);
      } catch (e) {
        throw new CompressionError(`zstd: ${(e as Error).message}`, { cause: e });
      }
    default:
      throw new CompressionError(`unsupported compression: ${compressionName(type)}`);
  }
}

/** Compresses `body` with compression `type` (ZLIB at RocketMQ's level 5, or LZ4 frame). */
export function compressBody(body: Uint8Array, type: number): Buffer {
  switch (type) {
    case CompressionType.ZLIB:
      return deflateSync(body, { level: 5 });
    case CompressionType.LZ4: {
      const out = lz4FrameCompress(body);
      return Buffer.from(out.buffer, out.byteOffset, out.length);
    }
    default:
      throw new CompressionError(`unsupported compression: ${compressionName(type)}`);
  }
}
