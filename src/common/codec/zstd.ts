/**
 * Zstandard decompression of message bodies (compression type 2, written by RocketMQ 5 producers
 * through zstd-jni's ZstdOutputStream). Node 20 has no zstd, so the decoding itself is fzstd, a pure
 * JavaScript decoder (no native build, no download at install). Before anything is decoded, every frame
 * header is read here, so that a hostile body cannot make the decoder allocate more than the caller
 * allows:
 *
 * - a frame that declares its content size must fit in what is left of `maxOutputLength`;
 * - a window above 2^27 bytes (128 MiB, the reference decoder's default limit) is refused, as
 *   `zstd -d` refuses it without `--long`;
 * - output streamed from frames that declare no size is counted block by block and stops at the cap; the
 *   output of raw and RLE blocks is read from their headers first, so a body of such blocks past the cap
 *   is refused without decoding;
 * - dictionaries (which RocketMQ never uses) and reserved bits are refused;
 * - skippable frames are skipped, as the format says.
 *
 * Content checksums (XXH64) are not verified: the stored body's CRC (`bodyCRC`, checked when decoding
 * with `checkCRC`) covers the compressed bytes already.
 *
 * Frame layout (RFC 8878, section 3.1.1):
 * ```
 * magic 0xFD2FB528 (LE) | descriptor 1 | window 0-1 | dictionary id 0/1/2/4 | content size 0/1/2/4/8
 * blocks: header 3 (LE: last bit, type 2 bits, size 21 bits) + data (raw: size, RLE: 1, compressed: size)
 * content checksum 4, when the descriptor says so
 * skippable frame: magic 0x184D2A50..5F (LE) | size 4 (LE) | size bytes
 * ```
 * @pure
 */
import { Decompress } from 'fzstd';

/** Failure to decompress a zstd body: malformed, truncated, over the output cap, or an unsupported feature. */
export class ZstdError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ZstdError';
  }
}

const ZSTD_MAGIC = 0xfd2fb528;
const SKIPPABLE_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
/** The reference decoder's default window limit (ZSTD_WINDOWLOG_LIMIT_DEFAULT = 27). */
export const ZSTD_MAX_WINDOW_BYTES = 2 ** 27;

const u32 = (b: Uint8Array, at: number): number =>
  ((b[at] as number) | ((b[at + 1] as number) << 8) | ((b[at + 2] as number) << 16) | ((b[at + 3] as number) << 24)) >>>
  0;

function need(b: Uint8Array, at: number, n: number, what: string): void {
  if (at + n > b.length) throw new ZstdError(`truncated zstd data: ${what} at byte ${at} needs ${n} bytes`);
}

/** One frame's header facts. */
interface FrameInfo {
  /** The declared content size, or -1 when the frame does not declare it. */
  contentSize: number;
  windowSize: number;
  /** Output of its raw and RLE blocks, known from their headers alone (compressed blocks not counted). */
  plainBytes: number;
  /** Where the frame ends (exclusive). */
  end: number;
}

/** Reads the frame that starts at `at` (header, then block headers to find its end). */
function readFrame(b: Uint8Array, at: number): FrameInfo {
  need(b, at, 5, 'frame header');
  const fhd = b[at + 4] as number;
  if ((fhd & 0x08) !== 0) throw new ZstdError(`malformed zstd frame at byte ${at}: reserved bit set`);
  const singleSegment = (fhd & 0x20) !== 0;
  const checksum = (fhd & 0x04) !== 0;
  const dictFlag = fhd & 0x03;
  const fcsFlag = fhd >> 6;
  let p = at + 5;
  let windowSize = 0;
  if (!singleSegment) {
    need(b, p, 1, 'window descriptor');
    const wd = b[p] as number;
    const base = 2 ** (10 + (wd >> 3));
    windowSize = base + (base / 8) * (wd & 7);
    p++;
  }
  const dictBytes = [0, 1, 2, 4][dictFlag] as number;
  need(b, p, dictBytes, 'dictionary id');
  let dictId = 0;
  for (let i = dictBytes - 1; i >= 0; i--) dictId = dictId * 256 + (b[p + i] as number);
  p += dictBytes;
  if (dictId !== 0) throw new ZstdError(`unsupported zstd frame at byte ${at}: it needs dictionary ${dictId}`);
  const fcsBytes = fcsFlag === 0 ? (singleSegment ? 1 : 0) : 2 ** fcsFlag;
  need(b, p, fcsBytes, 'content size');
  let contentSize = -1;
  if (fcsBytes > 0) {
    contentSize = 0;
    for (let i = fcsBytes - 1; i >= 0; i--) contentSize = contentSize * 256 + (b[p + i] as number);
    if (fcsBytes === 2) contentSize += 256;
    p += fcsBytes;
  }
  if (singleSegment) windowSize = contentSize;
  if (windowSize > ZSTD_MAX_WINDOW_BYTES)
    throw new ZstdError(
      `unsupported zstd frame at byte ${at}: window of ${windowSize} bytes exceeds ${ZSTD_MAX_WINDOW_BYTES}`,
    );
  let plainBytes = 0;
  for (;;) {
    need(b, p, 3, 'block header');
    const bh = (b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16);
    const last = (bh & 1) !== 0;
    const type = (bh >> 1) & 3;
    const size = bh >>> 3;
    if (type === 3) throw new ZstdError(`malformed zstd block at byte ${p}: reserved block type`);
    const dataBytes = type === 1 ? 1 : size;
    if (type !== 2) plainBytes += size;
    p += 3;
    need(b, p, dataBytes, 'block');
    p += dataBytes;
    if (last) break;
  }
  if (checksum) {
    need(b, p, 4, 'content checksum');
    p += 4;
  }
  return { contentSize, windowSize, plainBytes, end: p };
}

/**
 * Reads every frame header of `body` (skippable frames skipped) and refuses what `zstdDecompress` refuses
 * before decoding: malformed or truncated framing, dictionaries, oversized windows, and declared content
 * sizes that add up past `maxOutputLength`.
 */
function checkFrames(body: Uint8Array, maxOutputLength: number): void {
  if (body.length === 0) throw new ZstdError('no zstd frame: the body is empty');
  let declared = 0;
  for (let at = 0; at < body.length;) {
    need(body, at, 4, 'frame magic');
    const magic = u32(body, at);
    if ((magic & SKIPPABLE_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      need(body, at + 4, 4, 'skippable frame size');
      const size = u32(body, at + 4);
      need(body, at + 8, size, 'skippable frame');
      at += 8 + size;
      continue;
    }
    if (magic !== ZSTD_MAGIC)
      throw new ZstdError(`malformed zstd data: bad magic 0x${magic.toString(16)} at byte ${at}`);
    const f = readFrame(body, at);
    // A frame without a declared size still shows the output of its raw and RLE blocks in their headers.
    declared += f.contentSize >= 0 ? f.contentSize : f.plainBytes;
    if (declared > maxOutputLength)
      throw new ZstdError(`zstd content of ${declared} bytes exceeds the limit of ${maxOutputLength} bytes`);
    at = f.end;
  }
}

/** A decoder whose output goes to `sink`, stopping with a ZstdError once more than `maxOutputLength` came. */
function cappedDecoder(maxOutputLength: number, sink: (chunk: Uint8Array) => void): Decompress {
  let total = 0;
  return new Decompress((chunk) => {
    total += chunk.length;
    if (total > maxOutputLength) throw new ZstdError(`zstd content exceeds the limit of ${maxOutputLength} bytes`);
    sink(chunk);
  });
}

/** Feeds `input` to `d`; a decoder failure that is not already a ZstdError becomes one. */
function push(d: Decompress, input: Uint8Array, final: boolean): void {
  try {
    d.push(input, final);
  } catch (e) {
    if (e instanceof ZstdError) throw e;
    throw new ZstdError(`malformed zstd data: ${(e as Error).message}`, { cause: e });
  }
}

/**
 * The decompressed size of a zstd body, counted without keeping the output. The frame headers are
 * checked first, as `zstdDecompress` checks them; then the decoder is fed `sliceBytes` of the body at a
 * time, awaiting `pause()` between slices, so that a body which takes long to decode (frames that
 * declare no size are only bounded by `maxOutputLength`) holds the thread for one slice at a time.
 * Rejects with the errors `zstdDecompress` throws.
 */
export async function zstdDecompressedSize(
  body: Uint8Array,
  maxOutputLength: number,
  pause: () => Promise<void>,
  sliceBytes = 32 * 1024,
): Promise<number> {
  checkFrames(body, maxOutputLength);
  let total = 0;
  const d = cappedDecoder(maxOutputLength, (chunk) => {
    total += chunk.length;
  });
  for (let at = 0; at < body.length; at += sliceBytes) {
    if (at > 0) await pause();
    const end = Math.min(body.length, at + sliceBytes);
    push(d, body.subarray(at, end), end === body.length);
  }
  return total;
}

/**
 * Decompresses a zstd body (one or more frames, skippable frames allowed) into a fresh buffer of at
 * most `maxOutputLength` bytes. Throws `ZstdError` on malformed or truncated data, a dictionary, a
 * window over 128 MiB, or output over the cap.
 */
export function zstdDecompress(body: Uint8Array, maxOutputLength: number): Uint8Array {
  checkFrames(body, maxOutputLength);
  const chunks: Uint8Array[] = [];
  let total = 0;
  const d = cappedDecoder(maxOutputLength, (chunk) => {
    total += chunk.length;
    if (chunk.length > 0) chunks.push(chunk);
  });
  push(d, body, true);
  if (chunks.length === 1) return chunks[0] as Uint8Array;
  const out = new Uint8Array(total);
  let o = 0;
  for (const c of chunks) {
    out.set(c, o);
    o += c.length;
  }
  return out;
}
