/**
 * LZ4 frame format (https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md), which RocketMQ's
 * Lz4Compressor writes through lz4-java's LZ4FrameOutputStream: a small decoder (concatenated and
 * skippable frames, dependent or independent blocks, uncompressed blocks, header / block / content
 * checksums verified) and a small greedy encoder (independent 64 KiB blocks). Every read is bounds
 * checked; malformed input throws `Lz4Error`, output beyond `maxOutputLength` too.
 * @pure
 */

export class Lz4Error extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'Lz4Error';
  }
}

const FRAME_MAGIC = 0x184d2204;
const SKIPPABLE_MAGIC_MASK = 0xfffffff0;
const SKIPPABLE_MAGIC = 0x184d2a50;
const BLOCK_MAX_SIZES = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];

const P1 = 2654435761 | 0;
const P2 = 2246822519 | 0;
const P3 = 3266489917 | 0;
const P4 = 668265263;
const P5 = 374761393;

const rotl = (x: number, r: number): number => (x << r) | (x >>> (32 - r));
const readLE32 = (b: Uint8Array, p: number): number =>
  ((b[p] as number) | ((b[p + 1] as number) << 8) | ((b[p + 2] as number) << 16) | ((b[p + 3] as number) << 24)) >>> 0;
const writeLE32 = (b: Uint8Array, p: number, v: number): void => {
  b[p] = v;
  b[p + 1] = v >>> 8;
  b[p + 2] = v >>> 16;
  b[p + 3] = v >>> 24;
};

const xxRound = (acc: number, input: number): number => Math.imul(rotl((acc + Math.imul(input, P2)) | 0, 13), P1);

/** xxHash32 of `b[start, end)`, unsigned. */
export function xxh32(b: Uint8Array, start: number, end: number, seed = 0): number {
  let p = start;
  const len = end - start;
  let h: number;
  if (len >= 16) {
    let v1 = (seed + P1 + P2) | 0;
    let v2 = (seed + P2) | 0;
    let v3 = seed | 0;
    let v4 = (seed - P1) | 0;
    const limit = end - 16;
    while (p <= limit) {
      v1 = xxRound(v1, readLE32(b, p));
      v2 = xxRound(v2, readLE32(b, p + 4));
      v3 = xxRound(v3, readLE32(b, p + 8));
      v4 = xxRound(v4, readLE32(b, p + 12));
      p += 16;
    }
    h = (rotl(v1, 1) + rotl(v2, 7) + rotl(v3, 12) + rotl(v4, 18)) | 0;
  } else {
    h = (seed + P5) | 0;
  }
  h = (h + len) | 0;
  while (p + 4 <= end) {
    h = Math.imul(rotl((h + Math.imul(readLE32(b, p), P3)) | 0, 17), P4);
    p += 4;
  }
  while (p < end) {
    h = Math.imul(rotl((h + Math.imul(b[p] as number, P5)) | 0, 11), P1);
    p++;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2);
  h ^= h >>> 13;
  h = Math.imul(h, P3);
  h ^= h >>> 16;
  return h >>> 0;
}

/** A growable output with a hard cap. */
class Output {
  buf: Uint8Array;
  len = 0;
  constructor(
    initial: number,
    readonly max: number,
  ) {
    this.buf = new Uint8Array(Math.max(16, Math.min(initial, max)));
  }
  reserve(extra: number): void {
    const need = this.len + extra;
    if (need > this.max) throw new Lz4Error(`decompressed size exceeds ${this.max} bytes`);
    if (need <= this.buf.length) return;
    const next = new Uint8Array(Math.min(this.max, Math.max(need, this.buf.length * 2)));
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }
}

const tooLarge = (out: Output, end: number, maxBlock: number): Lz4Error =>
  new Lz4Error(end > out.max ? `decompressed size exceeds ${out.max} bytes` : `block output above ${maxBlock} bytes`);

/**
 * Decodes one LZ4 block `src[start, end)` into `out`, appending at most `maxBlock` bytes. Matches may
 * reach back to `windowStart` (the block start for independent blocks, earlier output otherwise).
 */
function decodeBlock(src: Uint8Array, start: number, end: number, out: Output, maxBlock: number, windowStart: number) {
  const room = Math.min(maxBlock, out.max - out.len);
  out.reserve(Math.min(room, Math.max(0, (end - start) * 4)));
  let ip = start;
  let op = out.len;
  const blockLimit = out.len + room;
  while (ip < end) {
    const token = src[ip++] as number;
    let litLen = token >>> 4;
    if (litLen === 15) {
      let b: number;
      do {
        if (ip >= end) throw new Lz4Error('truncated literal length');
        b = src[ip++] as number;
        litLen += b;
      } while (b === 255);
    }
    if (ip + litLen > end) throw new Lz4Error('literals past the end of the block');
    if (op + litLen > blockLimit) throw tooLarge(out, op + litLen, maxBlock);
    if (op + litLen > out.buf.length) {
      out.len = op;
      out.reserve(litLen);
    }
    out.buf.set(src.subarray(ip, ip + litLen), op);
    ip += litLen;
    op += litLen;
    if (ip === end) break; // the last sequence holds literals only
    if (ip + 2 > end) throw new Lz4Error('truncated match offset');
    const offset = (src[ip] as number) | ((src[ip + 1] as number) << 8);
    ip += 2;
    if (offset === 0 || op - offset < windowStart) throw new Lz4Error('match offset out of range');
    let matchLen = token & 15;
    if (matchLen === 15) {
      let b: number;
      do {
        if (ip >= end) throw new Lz4Error('truncated match length');
        b = src[ip++] as number;
        matchLen += b;
      } while (b === 255);
    }
    matchLen += 4;
    if (op + matchLen > blockLimit) throw tooLarge(out, op + matchLen, maxBlock);
    if (op + matchLen > out.buf.length) {
      out.len = op;
      out.reserve(matchLen);
    }
    const buf = out.buf;
    let from = op - offset;
    if (offset >= matchLen) {
      buf.copyWithin(op, from, from + matchLen);
      op += matchLen;
    } else {
      for (let i = 0; i < matchLen; i++) buf[op++] = buf[from++] as number;
    }
  }
  out.len = op;
}

/** Decompresses one or more LZ4 frames (skippable frames are skipped). */
export function lz4FrameDecompress(src: Uint8Array, maxOutputLength: number): Uint8Array {
  const out = new Output(src.length * 4, maxOutputLength);
  let p = 0;
  let frames = 0;
  while (p < src.length) {
    if (p + 4 > src.length) throw new Lz4Error('truncated frame magic');
    const magic = readLE32(src, p);
    if ((magic & SKIPPABLE_MAGIC_MASK) >>> 0 === SKIPPABLE_MAGIC) {
      if (p + 8 > src.length) throw new Lz4Error('truncated skippable frame');
      const size = readLE32(src, p + 4);
      if (p + 8 + size > src.length) throw new Lz4Error('truncated skippable frame');
      p += 8 + size;
      continue;
    }
    if (magic !== FRAME_MAGIC) throw new Lz4Error(`bad LZ4 frame magic 0x${magic.toString(16)}`);
    p = decodeFrame(src, p + 4, out);
    frames++;
  }
  if (frames === 0) throw new Lz4Error('no LZ4 frame');
  return out.buf.subarray(0, out.len);
}

function decodeFrame(src: Uint8Array, start: number, out: Output): number {
  let p = start;
  if (p + 3 > src.length) throw new Lz4Error('truncated frame descriptor');
  const flg = src[p] as number;
  const bd = src[p + 1] as number;
  if (flg >>> 6 !== 1) throw new Lz4Error('unsupported LZ4 frame version');
  if ((flg & 0x02) !== 0 || (bd & 0x8f) !== 0) throw new Lz4Error('reserved bits set in frame descriptor');
  const blockIndependent = (flg & 0x20) !== 0;
  const blockChecksum = (flg & 0x10) !== 0;
  const hasContentSize = (flg & 0x08) !== 0;
  const contentChecksum = (flg & 0x04) !== 0;
  const hasDictId = (flg & 0x01) !== 0;
  const maxBlock = BLOCK_MAX_SIZES[bd >>> 4] ?? 0;
  if (maxBlock === 0) throw new Lz4Error('bad block maximum size');
  const descEnd = p + 2 + (hasContentSize ? 8 : 0) + (hasDictId ? 4 : 0);
  if (descEnd + 1 > src.length) throw new Lz4Error('truncated frame descriptor');
  if (hasDictId) throw new Lz4Error('LZ4 dictionaries are not supported');
  if (((xxh32(src, p, descEnd) >>> 8) & 0xff) !== src[descEnd]) throw new Lz4Error('frame header checksum mismatch');
  let contentSize = -1;
  if (hasContentSize) {
    const lo = readLE32(src, p + 2);
    const hi = readLE32(src, p + 6);
    contentSize = hi * 4294967296 + lo;
    if (contentSize > out.max - out.len) throw new Lz4Error(`decompressed size exceeds ${out.max} bytes`);
  }
  p = descEnd + 1;
  const frameStart = out.len;
  for (;;) {
    if (p + 4 > src.length) throw new Lz4Error('truncated block size');
    const word = readLE32(src, p);
    p += 4;
    if (word === 0) break; // EndMark
    const uncompressed = (word & 0x80000000) !== 0;
    const size = word & 0x7fffffff;
    if (size > maxBlock) throw new Lz4Error('block larger than the frame maximum');
    if (p + size + (blockChecksum ? 4 : 0) > src.length) throw new Lz4Error('truncated block');
    if (blockChecksum && xxh32(src, p, p + size) !== readLE32(src, p + size)) {
      throw new Lz4Error('block checksum mismatch');
    }
    if (uncompressed) {
      out.reserve(size);
      out.buf.set(src.subarray(p, p + size), out.len);
      out.len += size;
    } else {
      decodeBlock(src, p, p + size, out, maxBlock, blockIndependent ? out.len : frameStart);
    }
    p += size + (blockChecksum ? 4 : 0);
  }
  if (contentChecksum) {
    if (p + 4 > src.length) throw new Lz4Error('truncated content checksum');
    if (xxh32(out.buf, frameStart, out.len) !== readLE32(src, p)) throw new Lz4Error('content checksum mismatch');
    p += 4;
  }
  if (contentSize >= 0 && out.len - frameStart !== contentSize) throw new Lz4Error('content size mismatch');
  return p;
}

const ENC_BLOCK = 64 * 1024;
const MIN_MATCH = 4;
const LAST_LITERALS = 5;
const MF_LIMIT = 12;

function writeLength(dst: Uint8Array, p: number, n: number): number {
  while (n >= 255) {
    dst[p++] = 255;
    n -= 255;
  }
  dst[p++] = n;
  return p;
}

/** Greedy LZ4 block compression of `src[start, end)` into `dst` at `dp`; returns the new `dp`. */
function compressBlock(src: Uint8Array, start: number, end: number, dst: Uint8Array, dp: number, table: Int32Array) {
  table.fill(-1);
  let anchor = start;
  let ip = start;
  const mfLimit = end - MF_LIMIT;
  const matchLimit = end - LAST_LITERALS;
  const emit = (litEnd: number, offset: number, matchLen: number): void => {
    const litLen = litEnd - anchor;
    const tokenPos = dp++;
    let token = (litLen >= 15 ? 15 : litLen) << 4;
    if (litLen >= 15) dp = writeLength(dst, dp, litLen - 15);
    dst.set(src.subarray(anchor, litEnd), dp);
    dp += litLen;
    if (matchLen > 0) {
      dst[dp++] = offset;
      dst[dp++] = offset >>> 8;
      const ml = matchLen - MIN_MATCH;
      token |= ml >= 15 ? 15 : ml;
      if (ml >= 15) dp = writeLength(dst, dp, ml - 15);
    }
    dst[tokenPos] = token;
  };
  while (ip < mfLimit) {
    const seq = readLE32(src, ip);
    const h = Math.imul(seq, P1) >>> 20;
    const ref = table[h] as number;
    table[h] = ip;
    if (ref >= start && ip - ref <= 65535 && readLE32(src, ref) === seq) {
      let len = MIN_MATCH;
      while (ip + len < matchLimit && src[ref + len] === src[ip + len]) len++;
      emit(ip, ip - ref, len);
      ip += len;
      anchor = ip;
    } else {
      ip++;
    }
  }
  emit(end, 0, 0);
  return dp;
}

/** Compresses into one LZ4 frame: independent 64 KiB blocks, no checksums besides the header's. */
export function lz4FrameCompress(src: Uint8Array): Uint8Array {
  const blocks = Math.ceil(src.length / ENC_BLOCK);
  const dst = new Uint8Array(7 + 4 + blocks * (4 + ENC_BLOCK + Math.ceil(ENC_BLOCK / 255) + 16));
  writeLE32(dst, 0, FRAME_MAGIC);
  dst[4] = 0x60; // version 01, block independence
  dst[5] = 0x40; // 64 KiB blocks
  dst[6] = (xxh32(dst, 4, 6) >>> 8) & 0xff;
  let dp = 7;
  const table = new Int32Array(4096);
  for (let s = 0; s < src.length; s += ENC_BLOCK) {
    const e = Math.min(src.length, s + ENC_BLOCK);
    const blockStart = dp + 4;
    const blockEnd = compressBlock(src, s, e, dst, blockStart, table);
    const size = blockEnd - blockStart;
    if (size >= e - s) {
      writeLE32(dst, dp, (e - s) | 0x80000000);
      dst.set(src.subarray(s, e), blockStart);
      dp = blockStart + (e - s);
    } else {
      writeLE32(dst, dp, size);
      dp = blockEnd;
    }
  }
  writeLE32(dst, dp, 0);
  dp += 4;
  return dst.subarray(0, dp);
}
