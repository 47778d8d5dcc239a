/**
 * Java's number parsing and ordering, as RocketMQ's SQL92 evaluator relies on them: property values
 * are strings, and a comparison with a number literal parses the string with the literal's Java type
 * (`Integer.valueOf`, `Long.valueOf`, `Double.valueOf`). Each parser returns a sentinel on failure
 * (`undefined`) so the hot path does not pay for exceptions; the evaluator turns that into an error.
 *
 * Representation: a Java int and a Java double are JS numbers, a Java long is a `bigint` (a long can
 * exceed 2^53, and `Long.valueOf("9223372036854775806") < 9223372036854775807L` must hold).
 * @pure
 */

/**
 * The zero of every run of ten decimal digits (Unicode category Nd) in the Basic Multilingual Plane.
 * `Character.digit(ch, 10)` accepts exactly these (Java 17, Unicode 13; checked against the JDK).
 * Supplementary digits never count: Java parses char by char and a surrogate is not a digit.
 */
const DIGIT_ZEROS: readonly number[] = [
  0x30, 0x660, 0x6f0, 0x7c0, 0x966, 0x9e6, 0xa66, 0xae6, 0xb66, 0xbe6, 0xc66, 0xce6, 0xd66, 0xde6, 0xe50, 0xed0, 0xf20,
  0x1040, 0x1090, 0x17e0, 0x1810, 0x1946, 0x19d0, 0x1a80, 0x1a90, 0x1b50, 0x1bb0, 0x1c40, 0x1c50, 0xa620, 0xa8d0,
  0xa900, 0xa9d0, 0xa9f0, 0xaa50, 0xabf0, 0xff10,
];

/** Java's `Character.digit(c, 10)` for a UTF-16 code unit: 0..9, or -1. */
export function javaDecimalDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c < 0x660) return -1;
  for (const zero of DIGIT_ZEROS) {
    const d = c - zero;
    if (d >= 0 && d <= 9) return d;
  }
  return -1;
}

const INT_MAX = 2147483647;

/**
 * Java's sign rule in `Integer.valueOf` / `Long.valueOf`: a first char below `'0'` must be `+` or `-`
 * and must be followed by more. Returns where the digits start (0 or 1), or -1 when Java throws.
 */
function digitsStart(s: string): number {
  if (s.length === 0) return -1;
  const first = s.charCodeAt(0);
  if (first >= 0x30) return 0;
  return (first === 0x2d || first === 0x2b) && s.length > 1 ? 1 : -1;
}

/**
 * Java's `Integer.valueOf(String)` (radix 10): an optional `+`/`-`, then one or more digits of any
 * script (`"٣"` is 3), no whitespace, no decimal point, within int range. `undefined` when Java throws
 * NumberFormatException.
 */
export function parseJavaInt(s: string): number | undefined {
  let i = digitsStart(s);
  if (i < 0) return undefined;
  const negative = i === 1 && s.charCodeAt(0) === 0x2d;
  const len = s.length;
  const limit = negative ? INT_MAX + 1 : INT_MAX;
  let result = 0;
  for (; i < len; i++) {
    const c = s.charCodeAt(i);
    const d = c >= 0x30 && c <= 0x39 ? c - 0x30 : javaDecimalDigit(c);
    if (d < 0) return undefined;
    result = result * 10 + d;
    if (result > limit) return undefined;
  }
  // `0 - 0` is +0: a Java int has no negative zero.
  return negative ? 0 - result : result;
}

const LONG_MIN = -(2n ** 63n);
const LONG_MAX = 2n ** 63n - 1n;

/** Java's `Long.valueOf(String)` (radix 10), same rules as {@link parseJavaInt} with the long range. */
export function parseJavaLong(s: string): bigint | undefined {
  let i = digitsStart(s);
  if (i < 0) return undefined;
  const negative = i === 1 && s.charCodeAt(0) === 0x2d;
  const len = s.length;
  let digits = '';
  for (; i < len; i++) {
    const d = javaDecimalDigit(s.charCodeAt(i));
    if (d < 0) return undefined;
    if (d === 0 && digits === '') continue; // leading zeros
    digits += String.fromCharCode(0x30 + d);
    if (digits.length > 19) return undefined;
  }
  const v = digits === '' ? 0n : BigInt(negative ? '-' + digits : digits);
  return v < LONG_MIN || v > LONG_MAX ? undefined : v;
}

/** Java's `String.trim`: strips every char <= U+0020 from both ends (and nothing else). */
export function javaTrim(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && s.charCodeAt(start) <= 0x20) start++;
  while (end > start && s.charCodeAt(end - 1) <= 0x20) end--;
  return start === 0 && end === s.length ? s : s.slice(start, end);
}

const isAsciiDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;

/**
 * Java's `Double.valueOf(String)`: trims (chars <= U+0020), then accepts an optional sign and either
 * `NaN`, `Infinity`, a hexadecimal float (`0x1.8p3`, binary exponent required) or a decimal with
 * optional exponent, each optionally followed by one of `f F d D`. Digits are ASCII only. `undefined`
 * when Java throws NumberFormatException.
 */
export function parseJavaDouble(input: string): number | undefined {
  const s = javaTrim(input);
  const len = s.length;
  if (len === 0) return undefined;
  let i = 0;
  let negative = false;
  let c = s.charCodeAt(0);
  if (c === 0x2d || c === 0x2b) {
    negative = c === 0x2d;
    i = 1;
    if (i >= len) return undefined;
    c = s.charCodeAt(i);
  }
  if (c === 0x4e /* N */) return s.length - i === 3 && s.endsWith('NaN') ? NaN : undefined;
  if (c === 0x49 /* I */) {
    if (s.length - i === 8 && s.endsWith('Infinity')) return negative ? -Infinity : Infinity;
    return undefined;
  }
  if (c === 0x30 && i + 1 < len) {
    const x = s.charCodeAt(i + 1);
    if (x === 0x78 || x === 0x58) return parseHexDouble(s);
  }
  const start = i;
  let digits = 0;
  let dot = false;
  for (; i < len; i++) {
    c = s.charCodeAt(i);
    if (isAsciiDigit(c)) digits++;
    else if (c === 0x2e) {
      if (dot) return undefined;
      dot = true;
    } else break;
  }
  if (digits === 0) return undefined;
  if (i < len && (s.charCodeAt(i) === 0x65 || s.charCodeAt(i) === 0x45)) {
    i++;
    if (i < len && (s.charCodeAt(i) === 0x2b || s.charCodeAt(i) === 0x2d)) i++;
    const expStart = i;
    while (i < len && isAsciiDigit(s.charCodeAt(i))) i++;
    if (i === expStart) return undefined;
  }
  let end = i;
  if (i < len) {
    // one type suffix, and only as the last character
    c = s.charCodeAt(i);
    if (i !== len - 1 || (c !== 0x66 && c !== 0x46 && c !== 0x64 && c !== 0x44)) return undefined;
    end = i;
  }
  // The validated text is also valid for JS, and both round correctly to nearest.
  const v = Number(s.slice(start, end));
  return negative ? -v : v;
}

const HEX_FLOAT = /^([-+])?0[xX](?:([0-9a-fA-F]+)\.?|([0-9a-fA-F]*)\.([0-9a-fA-F]+))[pP]([-+])?([0-9]+)[fFdD]?$/;

/** The hexadecimal branch of `Double.valueOf` (`[+-]0x<hex>[.<hex>]p[+-]<dec>[fFdD]`), exactly rounded. */
function parseHexDouble(s: string): number | undefined {
  const m = HEX_FLOAT.exec(s);
  if (!m) return undefined;
  const negative = m[1] === '-';
  const intPart = m[2] ?? m[3] ?? '';
  const fracPart = m[2] === undefined ? (m[4] ?? '') : '';
  const all = (intPart + fracPart).replace(/^0+/, '');
  if (all === '') return negative ? -0 : 0;
  const expDigits = (m[6] ?? '0').replace(/^0+/, '');
  // An exponent past int range makes Java answer infinity or zero; anything that long is beyond
  // the double range anyway, so a clamp gives the same answer.
  const rawExp = expDigits.length > 9 ? 1e9 : Number(expDigits || '0');
  const binExp = (m[5] === '-' ? -rawExp : rawExp) - 4 * fracPart.length;
  const v = roundBinary(BigInt('0x' + all), binExp);
  return negative ? -v : v;
}

/** `sig * 2^exp` rounded to the nearest double, ties to even (sig > 0). */
function roundBinary(sig: bigint, exp: number): number {
  const bits = sig.toString(2).length;
  const top = bits - 1 + exp; // exponent of the leading bit
  if (top > 1024) return Infinity;
  if (top < -1080) return 0;
  // keep 53 significant bits, or fewer when the result is subnormal (unit 2^-1074)
  const shift = Math.max(bits - 53, -1074 - exp);
  let m = sig;
  let e = exp;
  if (shift > 0) {
    const b = BigInt(shift);
    const rest = sig & ((1n << b) - 1n);
    m = sig >> b;
    const half = 1n << (b - 1n);
    if (rest > half || (rest === half && (m & 1n) === 1n)) m += 1n;
    e += shift;
  }
  // m < 2^54 here, so Number(m) is exact; split the power of two so no factor overflows early.
  const n = Number(m);
  if (e > 0) return e > 1023 ? n * 2 ** 1023 * 2 ** (e - 1023) : n * 2 ** e;
  return e < -1022 ? n * 2 ** -1022 * 2 ** (e + 1022) : n * 2 ** e;
}

/**
 * Java's `Double.compare`: numeric order, except that NaN is above everything (+Infinity included)
 * and equal to itself, and -0.0 is below 0.0.
 */
export function javaDoubleCompare(a: number, b: number): number {
  if (a < b) return -1;
  if (a > b) return 1;
  if (a === b) {
    if (a !== 0) return 0;
    const na = Object.is(a, -0);
    const nb = Object.is(b, -0);
    return na === nb ? 0 : na ? -1 : 1;
  }
  // at least one NaN
  const an = Number.isNaN(a);
  const bn = Number.isNaN(b);
  return an === bn ? 0 : an ? 1 : -1;
}

/** Java's `Boolean.valueOf(String)`: true only for "true" in any letter case. */
export function javaBooleanValueOf(s: string): boolean {
  return s.length === 4 && /^true$/i.test(s);
}
