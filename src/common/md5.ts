/**
 * MD5 (RFC 1321) over bytes, written out so that the queue-allocation core stays pure (no `node:*`
 * import): `AllocateMessageQueueConsistentHash` needs MD5 for its ring positions,
 * and `node:crypto` would make that module impure. The inputs are short keys (client ids, queue
 * names), so speed does not matter; the unit test checks it against `node:crypto` and RocketMQ's
 * own ring hashes.
 * @pure
 */

// Per-round shift amounts.
const S: readonly number[] = [
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 4,
  11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
];

// K[i] = floor(abs(sin(i + 1)) * 2^32), computed once (exact in double precision for all 64 values).
const K: readonly number[] = Array.from(
  { length: 64 },
  (_, i) => Math.floor(Math.abs(Math.sin(i + 1)) * 0x100000000) | 0,
);

const rotl = (x: number, c: number): number => (x << c) | (x >>> (32 - c));

/** The 16-byte MD5 digest of `data`. */
export function md5(data: Uint8Array): Uint8Array {
  const len = data.length;
  // Message + 0x80 + zero padding to 56 mod 64 + 64-bit little-endian bit length.
  const padded = new Uint8Array((((len + 8) >>> 6) + 1) << 6);
  padded.set(data);
  padded[len] = 0x80;
  const bitLenLo = (len * 8) >>> 0;
  const bitLenHi = Math.floor(len / 0x20000000) >>> 0;
  const view = new DataView(padded.buffer);
  view.setUint32(padded.length - 8, bitLenLo, true);
  view.setUint32(padded.length - 4, bitLenHi, true);

  let a0 = 0x67452301;
  let b0 = 0xefcdab89 | 0;
  let c0 = 0x98badcfe | 0;
  let d0 = 0x10325476;
  const m = new Int32Array(16);
  for (let off = 0; off < padded.length; off += 64) {
    for (let j = 0; j < 16; j++) m[j] = view.getInt32(off + j * 4, true);
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const tmp = d;
      d = c;
      c = b;
      b = (b + rotl((a + f + (K[i] as number) + (m[g] as number)) | 0, S[i] as number)) | 0;
      a = tmp;
    }
    a0 = (a0 + a) | 0;
    b0 = (b0 + b) | 0;
    c0 = (c0 + c) | 0;
    d0 = (d0 + d) | 0;
  }
  const out = new Uint8Array(16);
  const ov = new DataView(out.buffer);
  ov.setInt32(0, a0, true);
  ov.setInt32(4, b0, true);
  ov.setInt32(8, c0, true);
  ov.setInt32(12, d0, true);
  return out;
}

/** Hex form of the digest (for tests and logs). */
export function md5Hex(data: Uint8Array): string {
  let s = '';
  for (const b of md5(data)) s += b.toString(16).padStart(2, '0');
  return s;
}
