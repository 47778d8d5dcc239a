/**
 * Big-endian integer access on byte arrays, tuned for the decode path (no Buffer method calls, no
 * BigInt), plus upper-case hex. 64-bit values are JS numbers: a value outside ±(2^53 - 1) is reported
 * to the caller (`NaN` from the readers, `false` from the checks) so it can fail with a typed error.
 * @pure
 */

const TWO_32 = 4294967296;

/** Signed 32-bit big-endian read. The caller guarantees `p + 4 <= b.length`. */
export function readInt32(b: Uint8Array, p: number): number {
  return ((b[p] as number) << 24) | ((b[p + 1] as number) << 16) | ((b[p + 2] as number) << 8) | (b[p + 3] as number);
}

/** Unsigned 32-bit big-endian read. */
export function readUInt32(b: Uint8Array, p: number): number {
  return readInt32(b, p) >>> 0;
}

/** Signed 16-bit big-endian read. */
export function readInt16(b: Uint8Array, p: number): number {
  return ((((b[p] as number) << 8) | (b[p + 1] as number)) << 16) >> 16;
}

/**
 * Signed 64-bit big-endian read as a JS number; `NaN` when the value is outside ±MAX_SAFE_INTEGER
 * (it could not be represented exactly).
 */
export function readInt64(b: Uint8Array, p: number): number {
  const v = readInt32(b, p) * TWO_32 + readUInt32(b, p + 4);
  return v > Number.MAX_SAFE_INTEGER || v < -Number.MAX_SAFE_INTEGER ? NaN : v;
}

export function writeInt32(b: Uint8Array, p: number, v: number): void {
  b[p] = v >>> 24;
  b[p + 1] = v >>> 16;
  b[p + 2] = v >>> 8;
  b[p + 3] = v;
}

export function writeInt16(b: Uint8Array, p: number, v: number): void {
  b[p] = v >>> 8;
  b[p + 1] = v;
}

/** Signed 64-bit big-endian write of a safe integer (checked by the caller). */
export function writeInt64(b: Uint8Array, p: number, v: number): void {
  const hi = Math.floor(v / TWO_32);
  writeInt32(b, p, hi);
  writeInt32(b, p + 4, v - hi * TWO_32);
}

const HEX_DIGITS = '0123456789ABCDEF';
/** Upper-case hex of every byte value. */
export const BYTE_HEX: readonly string[] = Array.from(
  { length: 256 },
  (_, i) => (HEX_DIGITS[i >> 4] as string) + (HEX_DIGITS[i & 15] as string),
);

/** Upper-case hex of `b[start, end)` (RocketMQ's UtilAll.bytes2string). */
export function bytesToHex(b: Uint8Array, start = 0, end = b.length): string {
  let s = '';
  for (let i = start; i < end; i++) s += BYTE_HEX[b[i] as number] as string;
  return s;
}

/** Upper-case hex of a 32-bit value, 8 chars. */
export function hex32(v: number): string {
  return (
    (BYTE_HEX[(v >>> 24) & 255] as string) +
    (BYTE_HEX[(v >>> 16) & 255] as string) +
    (BYTE_HEX[(v >>> 8) & 255] as string) +
    (BYTE_HEX[v & 255] as string)
  );
}

/** Upper-case hex of a signed 64-bit safe integer, 16 chars (two's complement for negatives). */
export function hex64(v: number): string {
  const hi = Math.floor(v / TWO_32);
  return hex32(hi) + hex32(v - hi * TWO_32);
}

/** Hex text (either case, even length) to bytes; `null` when the text is not hex. */
export function hexToBytes(s: string): Buffer | null {
  if (s.length % 2 !== 0 || !/^[0-9a-fA-F]*$/.test(s)) return null;
  return Buffer.from(s, 'hex');
}

/** Whether `v` is an integer a Java `int` can hold (signed) or its unsigned 32-bit spelling. */
export const isInt32Like = (v: unknown): v is number =>
  typeof v === 'number' && Number.isInteger(v) && v >= -2147483648 && v <= 4294967295;
