/**
 * The two halves of fastjson that RocketMQ's JSON remoting header depends on:
 *
 * - writing a string exactly as fastjson 1.2.83 does (`SerializeWriter.writeStringWithDoubleQuote`
 *   with RocketMQ's default features): `"`, `\`, backspace, tab, newline, form feed and carriage
 *   return get their short escapes; every other C0 control, DEL, the C1 controls and U+2028/U+2029
 *   are written as `\u` with upper-case hex; everything else (non-ASCII, `/`, U+FEFF) is written raw;
 * - reading a header as leniently as fastjson does: any field order, unknown fields, unquoted or
 *   single-quoted keys and strings, trailing commas. Numbers keep their source text, so a number
 *   that lands in a string field becomes the same string fastjson would make of it.
 *
 * The JSON bodies sent over TCP (HeartbeatData out, TopicRouteData in) use the same two halves. The
 * admin bodies, whose maps may be keyed by objects, have their own codec in protocol/admin-body-json.ts.
 * @pure
 */

/** A number as written in the source text (fastjson keeps integers as text for string fields). */
export class JsonNumber {
  constructor(
    readonly raw: string,
    readonly integral: boolean,
  ) {}
}

export type JsonValue = string | boolean | null | JsonNumber | JsonValue[] | JsonObject;
/** An object's members in source order; a repeated key keeps its first position and its last value. */
export type JsonObject = Map<string, JsonValue>;

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f\u007f-\u009f\u2028\u2029]/;
const HEX = '0123456789ABCDEF';

/** `s` as a fastjson double-quoted string literal (lone surrogates are left for the UTF-8 writer). */
export function fastjsonString(s: string): string {
  if (!NEEDS_ESCAPE.test(s)) return `"${s}"`;
  let out = '"';
  let from = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    let esc: string | undefined;
    if (c === 0x22) esc = '\\"';
    else if (c === 0x5c) esc = '\\\\';
    else if (c === 0x08) esc = '\\b';
    else if (c === 0x09) esc = '\\t';
    else if (c === 0x0a) esc = '\\n';
    else if (c === 0x0c) esc = '\\f';
    else if (c === 0x0d) esc = '\\r';
    else if (c < 0x20 || (c >= 0x7f && c <= 0x9f) || c === 0x2028 || c === 0x2029)
      esc = `\\u${HEX[(c >> 12) & 15]}${HEX[(c >> 8) & 15]}${HEX[(c >> 4) & 15]}${HEX[c & 15]}`;
    if (esc === undefined) continue;
    out += s.slice(from, i) + esc;
    from = i + 1;
  }
  return `${out}${s.slice(from)}"`;
}

/** Thrown by `parseLenientJson`; `position` is a UTF-16 index into the text. */
export class JsonSyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
  ) {
    super(`${message} at index ${position}`);
  }
}

/** Deeper nesting than this is refused rather than risking the stack. */
const MAX_DEPTH = 256;

const WHITESPACE = new Set([0x20, 0x0a, 0x0d, 0x09, 0x0c, 0x08]);
const isDigit = (c: number): boolean => c >= 0x30 && c <= 0x39;
/** Characters of an unquoted key: identifiers and numbers. */
const isBareKeyChar = (c: number): boolean =>
  isDigit(c) ||
  (c >= 0x41 && c <= 0x5a) ||
  (c >= 0x61 && c <= 0x7a) ||
  c === 0x5f ||
  c === 0x24 ||
  c === 0x2d ||
  c === 0x2e ||
  c > 0x7f;

/**
 * Parses `text` as one JSON value the way fastjson's default parser accepts it; anything after the
 * value other than whitespace is an error (as `JSON.parseObject` closes the parser).
 */
export function parseLenientJson(text: string): JsonValue {
  const p = new Parser(text);
  // A leading byte-order mark is skipped, as fastjson's scanner skips it.
  if (text.charCodeAt(0) === 0xfeff) p.i = 1;
  p.ws();
  const v = p.value(0);
  p.ws();
  if (p.i < text.length) throw new JsonSyntaxError('unexpected text after the JSON value', p.i);
  return v;
}

class Parser {
  i = 0;
  constructor(readonly s: string) {}

  ws(): void {
    while (this.i < this.s.length && WHITESPACE.has(this.s.charCodeAt(this.i))) this.i++;
  }

  value(depth: number): JsonValue {
    if (depth > MAX_DEPTH) throw new JsonSyntaxError(`nesting deeper than ${MAX_DEPTH}`, this.i);
    const c = this.s.charCodeAt(this.i);
    if (c === 0x7b) return this.object(depth);
    if (c === 0x5b) return this.array(depth);
    if (c === 0x22 || c === 0x27) return this.string(c);
    if (c === 0x2d || isDigit(c)) return this.number();
    for (const [word, v] of LITERALS) {
      if (this.s.startsWith(word, this.i)) {
        this.i += word.length;
        return v;
      }
    }
    throw new JsonSyntaxError(this.i >= this.s.length ? 'unexpected end of JSON' : 'unexpected character', this.i);
  }

  object(depth: number): JsonObject {
    const out: JsonObject = new Map();
    this.i++; // {
    for (;;) {
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x7d) {
        this.i++;
        return out;
      }
      if (c === 0x2c) {
        // fastjson tolerates stray commas between members.
        this.i++;
        continue;
      }
      const key = c === 0x22 || c === 0x27 ? this.string(c) : this.bareKey();
      this.ws();
      if (this.s.charCodeAt(this.i) !== 0x3a) throw new JsonSyntaxError("expected ':' after a key", this.i);
      this.i++;
      this.ws();
      out.set(key, this.value(depth + 1));
      this.ws();
      const d = this.s.charCodeAt(this.i);
      if (d === 0x2c) this.i++;
      else if (d !== 0x7d) throw new JsonSyntaxError("expected ',' or '}'", this.i);
    }
  }

  array(depth: number): JsonValue[] {
    const out: JsonValue[] = [];
    this.i++; // [
    for (;;) {
      this.ws();
      const c = this.s.charCodeAt(this.i);
      if (c === 0x5d) {
        this.i++;
        return out;
      }
      if (c === 0x2c) {
        this.i++;
        continue;
      }
      out.push(this.value(depth + 1));
      this.ws();
      const d = this.s.charCodeAt(this.i);
      if (d === 0x2c) this.i++;
      else if (d !== 0x5d) throw new JsonSyntaxError("expected ',' or ']'", this.i);
    }
  }

  bareKey(): string {
    const start = this.i;
    while (this.i < this.s.length && isBareKeyChar(this.s.charCodeAt(this.i))) this.i++;
    if (this.i === start) throw new JsonSyntaxError('expected a key', this.i);
    return this.s.slice(start, this.i);
  }

  number(): JsonNumber {
    const m = NUMBER.exec(this.s.slice(this.i, this.i + 400));
    if (!m || m[0].length === 0 || m[1] === undefined) throw new JsonSyntaxError('malformed number', this.i);
    this.i += m[0].length;
    const raw = m[1];
    return new JsonNumber(raw, !/[.eE]/.test(raw));
  }

  string(quote: number): string {
    const s = this.s;
    let i = this.i + 1;
    let out = '';
    let from = i;
    for (;;) {
      if (i >= s.length) throw new JsonSyntaxError('unterminated string', this.i);
      const c = s.charCodeAt(i);
      if (c === quote) break;
      if (c !== 0x5c) {
        i++;
        continue;
      }
      out += s.slice(from, i);
      const e = s.charCodeAt(i + 1);
      const simple = ESCAPES.get(e);
      if (simple !== undefined) {
        out += simple;
        i += 2;
      } else if (e === 0x75 || e === 0x78) {
        const n = e === 0x75 ? 4 : 2;
        const hex = s.slice(i + 2, i + 2 + n);
        if (hex.length !== n || !/^[0-9a-fA-F]+$/.test(hex)) throw new JsonSyntaxError('malformed escape', i);
        out += String.fromCharCode(parseInt(hex, 16));
        i += 2 + n;
      } else {
        throw new JsonSyntaxError('unknown escape', i);
      }
      from = i;
    }
    this.i = i + 1;
    return out + s.slice(from, i);
  }
}

/** A JSON number; a trailing type suffix (`L`, `S`, `B`, `F`, `D`) is accepted and dropped, as fastjson does. */
const NUMBER = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)[LSBFD]?/;

const LITERALS: ReadonlyArray<readonly [string, JsonValue]> = [
  ['true', true],
  ['false', false],
  ['null', null],
];

const ESCAPES = new Map<number, string>([
  [0x22, '"'],
  [0x27, "'"],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
  [0x76, '\v'],
  [0x30, '\0'],
  [0x31, '\x01'],
  [0x32, '\x02'],
  [0x33, '\x03'],
  [0x34, '\x04'],
  [0x35, '\x05'],
  [0x36, '\x06'],
  [0x37, '\x07'],
]);

/**
 * What fastjson makes of a JSON value read into a `String` field or a `Map<String, String>` value:
 * integers keep their text, decimals go through BigDecimal's `toString`, booleans become
 * `"true"`/`"false"`, objects and arrays their JSON text.
 */
export function jsonValueToJavaString(v: JsonValue): string | null {
  if (v === null) return null;
  if (typeof v === 'string') return v;
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (v instanceof JsonNumber) return v.integral ? v.raw : bigDecimalToString(v.raw);
  return JSON.stringify(toPlain(v));
}

function toPlain(v: JsonValue): unknown {
  if (v instanceof JsonNumber) return Number(v.raw);
  if (Array.isArray(v)) return v.map(toPlain);
  if (v instanceof Map) return Object.fromEntries([...v].map(([k, x]) => [k, toPlain(x)]));
  return v;
}

/** Java's `new BigDecimal(raw).toString()` for a JSON number with a fraction or an exponent. */
export function bigDecimalToString(raw: string): string {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:[eE]([+-]?\d+))?$/.exec(raw);
  if (!m) return raw;
  const frac = m[3] ?? '';
  const unscaled = BigInt(`${m[2]}${frac}`);
  const scale = frac.length - Number(m[4] ?? '0');
  const coeff = unscaled.toString();
  const sign = unscaled !== 0n && m[1] === '-' ? '-' : '';
  const adjusted = -scale + (coeff.length - 1);
  if (scale >= 0 && adjusted >= -6) {
    if (scale === 0) return sign + coeff;
    if (coeff.length > scale)
      return `${sign}${coeff.slice(0, coeff.length - scale)}.${coeff.slice(coeff.length - scale)}`;
    return `${sign}0.${'0'.repeat(scale - coeff.length)}${coeff}`;
  }
  const mantissa = coeff.length > 1 ? `${coeff[0]}.${coeff.slice(1)}` : coeff;
  if (adjusted === 0) return sign + mantissa;
  return `${sign}${mantissa}E${adjusted > 0 ? '+' : ''}${adjusted}`;
}

/**
 * `value` (plain data: objects, arrays, strings, numbers, booleans) as fastjson writes a Java bean:
 * properties in alphabetical order, null and undefined properties left out, strings escaped as
 * fastjson escapes them. Used for the JSON bodies RocketMQ's broker reads (HeartbeatData), so that
 * the bytes are what a Java client sends.
 */
export function fastjsonStringify(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string':
      return fastjsonString(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      return value.toString();
    default:
      break;
  }
  if (Array.isArray(value)) return `[${value.map(fastjsonStringify).join(',')}]`;
  if (value instanceof Set) return fastjsonStringify([...value]);
  const obj = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const key of Object.keys(obj).sort()) {
    const v = obj[key];
    if (v === null || v === undefined || typeof v === 'function') continue;
    parts.push(`${fastjsonString(key)}:${fastjsonStringify(v)}`);
  }
  return `{${parts.join(',')}}`;
}

/** A parsed lenient-JSON value as plain data (objects, arrays, numbers), for standard `JSON.stringify`. */
export function jsonValueToPlain(v: JsonValue): unknown {
  return toPlain(v);
}
