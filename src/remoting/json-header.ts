/**
 * The JSON remoting header: fastjson's output for RocketMQ's `RemotingCommand`, and a reader as
 * lenient as fastjson's.
 *
 * Written: the bean's properties in alphabetical order — `code`, `extFields`, `flag`, `language` (the
 * enum name), `opaque`, `remark`, `serializeTypeCurrentRPC` (`"JSON"`), `version` — with null
 * properties and null map values left out, `extFields` entries in the map's own order.
 *
 * Read: any order, unknown properties ignored, property names matched as fastjson's smart match does
 * (case and `_`/`-` ignored when there is no exact match), numbers given as strings, numbers and
 * booleans inside `extFields` turned into strings. A missing `language` is JAVA and missing numbers
 * are 0; an unknown language name reads as null.
 * @pure
 */
import {
  JsonNumber,
  fastjsonString,
  jsonValueToJavaString,
  parseLenientJson,
  type JsonValue,
} from './fastjson-text.js';
import { RemotingDecodeError } from './remoting-decode-error.js';
import { LanguageCode, languageName, type LanguageName } from './language-code.js';
import { setOwn, type ExtFields, type NormalizedCommand, type RemotingCommand } from './remoting-command-model.js';
import { javaHashMapOrder } from './java-hash-map.js';

/** The header text (not yet UTF-8). */
export function encodeJsonHeader(cmd: NormalizedCommand): string {
  let s = `{"code":${cmd.code}`;
  const ext = cmd.extFields;
  if (ext !== null) {
    s += ',"extFields":{';
    for (let i = 0; i < ext.length; i += 2) {
      if (i > 0) s += ',';
      s += quotedKey(ext[i] as string) + fastjsonString(ext[i + 1] as string);
    }
    s += '}';
  }
  s += `,"flag":${cmd.flag}`;
  if (cmd.language !== null) s += `,"language":"${cmd.language}"`;
  s += `,"opaque":${cmd.opaque}`;
  if (cmd.remark !== null) s += `,"remark":${fastjsonString(cmd.remark)}`;
  return `${s},"serializeTypeCurrentRPC":"JSON","version":${cmd.version}}`;
}

const CODE = '{"code":';
const EXT_FIELDS = ',"extFields":{';
const FLAG = ',"flag":';
const LANGUAGE = ',"language":"';
const OPAQUE = ',"opaque":';
const REMARK = ',"remark":"';
const VERSION = ',"serializeTypeCurrentRPC":"JSON","version":';

/** Printable ASCII other than `"` and `\`: fastjson writes it as it is, one UTF-8 byte per character. */
function isPlain(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e || c === 0x22 || c === 0x5c) return false;
  }
  return true;
}

/** Characters of a 32-bit integer in decimal. */
function intLength(v: number): number {
  let n = v < 0 ? 2 : 1;
  for (let a = Math.abs(v); a >= 10; a = Math.floor(a / 10)) n++;
  return n;
}

/**
 * The byte length of the header `encodeJsonHeader` writes for `cmd` when every string in it is plain
 * (printable ASCII without `"` or `\`, so the text is its own UTF-8), else -1. Such a header is then
 * written by `writePlainJsonHeader` straight into the frame, with no string built for it.
 */
export function plainJsonHeaderLength(cmd: NormalizedCommand): number {
  let n = CODE.length + intLength(cmd.code);
  const ext = cmd.extFields;
  if (ext !== null) {
    n += EXT_FIELDS.length + 1 + (ext.length > 0 ? ext.length / 2 - 1 : 0);
    for (let i = 0; i < ext.length; i++) {
      const s = ext[i] as string;
      if (!isPlain(s)) return -1;
      n += s.length + 2 + (i & 1 ? 0 : 1);
    }
  }
  n += FLAG.length + intLength(cmd.flag);
  if (cmd.language !== null) n += LANGUAGE.length + cmd.language.length + 1;
  n += OPAQUE.length + intLength(cmd.opaque);
  if (cmd.remark !== null) {
    if (!isPlain(cmd.remark)) return -1;
    n += REMARK.length + cmd.remark.length + 1;
  }
  return n + VERSION.length + intLength(cmd.version) + 1;
}

/** Writes the header of `cmd` (one `plainJsonHeaderLength` accepted) into `buf` at `pos`; returns the end. */
export function writePlainJsonHeader(cmd: NormalizedCommand, buf: Uint8Array, pos: number): number {
  let p = writeAscii(buf, pos, CODE);
  p = writeInt(buf, p, cmd.code);
  const ext = cmd.extFields;
  if (ext !== null) {
    p = writeAscii(buf, p, EXT_FIELDS);
    for (let i = 0; i < ext.length; i += 2) {
      if (i > 0) buf[p++] = 0x2c; // ,
      buf[p++] = 0x22;
      p = writeAscii(buf, p, ext[i] as string);
      buf[p++] = 0x22;
      buf[p++] = 0x3a; // :
      buf[p++] = 0x22;
      p = writeAscii(buf, p, ext[i + 1] as string);
      buf[p++] = 0x22;
    }
    buf[p++] = 0x7d; // }
  }
  p = writeAscii(buf, p, FLAG);
  p = writeInt(buf, p, cmd.flag);
  if (cmd.language !== null) {
    p = writeAscii(buf, p, LANGUAGE);
    p = writeAscii(buf, p, cmd.language);
    buf[p++] = 0x22;
  }
  p = writeAscii(buf, p, OPAQUE);
  p = writeInt(buf, p, cmd.opaque);
  if (cmd.remark !== null) {
    p = writeAscii(buf, p, REMARK);
    p = writeAscii(buf, p, cmd.remark);
    buf[p++] = 0x22;
  }
  p = writeAscii(buf, p, VERSION);
  p = writeInt(buf, p, cmd.version);
  buf[p++] = 0x7d;
  return p;
}

function writeAscii(buf: Uint8Array, pos: number, s: string): number {
  for (let i = 0; i < s.length; i++) buf[pos + i] = s.charCodeAt(i);
  return pos + s.length;
}

function writeInt(buf: Uint8Array, pos: number, v: number): number {
  let p = pos;
  if (v < 0) buf[p++] = 0x2d; // -
  let a = Math.abs(v);
  const end = p + intLength(a);
  for (let i = end - 1; i >= p; i--) {
    buf[i] = 0x30 + (a % 10);
    a = Math.floor(a / 10);
  }
  return end;
}

/**
 * `"key":` of the header field names seen lately: every command of a kind writes the same names, so each
 * is escaped once rather than once per command. Bounded: emptied when full.
 */
const quotedKeys = new Map<string, string>();
const MAX_QUOTED_KEYS = 1024;

function quotedKey(key: string): string {
  let q = quotedKeys.get(key);
  if (q === undefined) {
    q = `${fastjsonString(key)}:`;
    if (quotedKeys.size >= MAX_QUOTED_KEYS) quotedKeys.clear();
    quotedKeys.set(key, q);
  }
  return q;
}

const FIELDS = ['code', 'extFields', 'flag', 'language', 'opaque', 'remark', 'serializeTypeCurrentRPC', 'version'];
const SMART = new Map(FIELDS.map((f) => [f.toLowerCase(), f]));

function fieldOf(key: string): string | undefined {
  if (FIELDS.includes(key)) return key;
  return SMART.get(key.replace(/[_-]/g, '').toLowerCase());
}

/** Decodes a JSON header; `offset` places error positions in the frame. The body is set by the caller. */
export function decodeJsonHeader(bytes: Uint8Array, offset: number): RemotingCommand {
  // Invalid UTF-8 becomes U+FFFD, as in Java's decoder.
  return decodeJsonHeaderText(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8'), offset);
}

/** Decodes a JSON header's text (already read from UTF-8); `offset` places error positions in the frame. */
export function decodeJsonHeaderText(text: string, offset: number): RemotingCommand {
  return decodeStrictJsonHeader(text) ?? decodeLenientJsonHeader(text, offset);
}

/** What a header that sets nothing reads as: language JAVA, numbers 0, nothing else. */
const defaultCommand = (): RemotingCommand => ({
  code: 0,
  language: 'JAVA',
  version: 0,
  opaque: 0,
  flag: 0,
  remark: null,
  extFields: null,
  body: null,
});

/** An array-index key: a JavaScript object would list it before the others, not in source order. */
const INDEX_KEY = /^(?:0|[1-9]\d{0,9})$/;

/**
 * The header as every RocketMQ client writes it — strict JSON, the bean's own property names, integers,
 * string extFields values — read with the built-in parser; undefined for anything else, which
 * `decodeLenientJsonHeader` reads (and explains). Both give the same command for the same text.
 * @internal
 */
export function decodeStrictJsonHeader(text: string): RemotingCommand | undefined {
  let root: unknown;
  try {
    root = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (typeof root !== 'object' || root === null || Array.isArray(root)) return undefined;
  const cmd = defaultCommand();
  const r = root as Record<string, unknown>;
  // for-in over own keys: no key array per header, as Object.keys would make.
  for (const key in r) {
    if (!Object.hasOwn(r, key)) continue;
    const value = r[key];
    switch (key) {
      case 'code':
      case 'flag':
      case 'opaque':
      case 'version':
        if (!Number.isInteger(value) || (value as number) < -0x80000000 || (value as number) > 0x7fffffff)
          return undefined;
        cmd[key] = value as number;
        break;
      case 'language':
        if (typeof value !== 'string' || !Object.hasOwn(LanguageCode, value)) return undefined;
        cmd.language = value as LanguageName;
        break;
      case 'remark':
        if (typeof value !== 'string') return undefined;
        cmd.remark = value;
        break;
      case 'extFields': {
        if (typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
        const ext = stringMapInJavaOrder(value as Record<string, unknown>);
        if (ext === undefined) return undefined;
        cmd.extFields = ext;
        break;
      }
      case 'serializeTypeCurrentRPC':
        break;
      default:
        // A name fastjson's smart match would map to a property is left to the lenient reader.
        if (fieldOf(key) !== undefined) return undefined;
    }
  }
  return cmd;
}

/**
 * A sequence of extFields keys seen before: the order a Java HashMap lists them in, and whether that is
 * already the order they came in. Every command of a kind from one client carries the same keys in the
 * same order, so the order is worked out once per sequence, not once per command.
 */
interface KeySequence {
  next: Map<string, KeySequence> | null;
  /** The keys of the sequence ending here in HashMap order; null until a header ends here. */
  javaOrder: readonly string[] | null;
  inJavaOrder: boolean;
}

const newSequence = (): KeySequence => ({ next: null, javaOrder: null, inJavaOrder: false });
let sequences = newSequence();
let sequenceCount = 0;
/** Bounded: the remembered sequences are dropped when there are this many. */
const MAX_SEQUENCES = 4096;

/**
 * A JSON object of string values as fastjson reads it into a `new HashMap()` (16 buckets to start with):
 * the same entries in the map's iteration order — `map` itself when it is in that order already.
 * Undefined when a value is not a string or a key is an array index (a JavaScript object would list it
 * first, not in the order it came).
 */
function stringMapInJavaOrder(map: Record<string, unknown>): ExtFields | undefined {
  let node = sequences;
  for (const k in map) {
    if (!Object.hasOwn(map, k)) continue;
    if (typeof map[k] !== 'string') return undefined;
    let child = node.next?.get(k);
    if (child === undefined) {
      if (INDEX_KEY.test(k)) return undefined;
      if (++sequenceCount > MAX_SEQUENCES) {
        sequences = newSequence();
        sequenceCount = 0;
        return stringMapInJavaOrder(map);
      }
      child = newSequence();
      (node.next ??= new Map()).set(k, child);
    }
    node = child;
  }
  if (node.javaOrder === null) {
    const keys = Object.keys(map);
    node.javaOrder = javaHashMapOrder(keys, 16);
    node.inJavaOrder = node.javaOrder.every((k, i) => k === keys[i]);
  }
  if (node.inJavaOrder) return map as ExtFields;
  const out: ExtFields = {};
  const order = node.javaOrder;
  for (let i = 0; i < order.length; i++) {
    const k = order[i] as string;
    setOwn(out, k, map[k] as string);
  }
  return out;
}

/** Decodes a JSON header as leniently as fastjson; `offset` places error positions in the frame. @internal */
export function decodeLenientJsonHeader(text: string, offset: number): RemotingCommand {
  let root: JsonValue;
  try {
    root = parseLenientJson(text);
  } catch (e) {
    throw new RemotingDecodeError(`malformed JSON header: ${(e as Error).message}`, offset, { cause: e });
  }
  if (!(root instanceof Map)) throw new RemotingDecodeError('the JSON header is not an object', offset);
  const cmd = defaultCommand();
  for (const [key, value] of root) {
    const field = fieldOf(key);
    switch (field) {
      case 'code':
      case 'flag':
      case 'opaque':
      case 'version': {
        const n = javaInt(value, field, offset);
        if (n !== null) cmd[field] = n;
        break;
      }
      case 'language':
        cmd.language = javaLanguage(value, offset);
        break;
      case 'remark':
        if (value instanceof Map || Array.isArray(value))
          throw new RemotingDecodeError('the JSON header remark is not a string', offset);
        cmd.remark = jsonValueToJavaString(value);
        break;
      case 'extFields':
        cmd.extFields = javaStringMap(value, offset);
        break;
      default:
        // serializeTypeCurrentRPC is the frame's business, and unknown properties are ignored.
        break;
    }
  }
  return cmd;
}

/** An int property: a JSON number, or a string holding one (as fastjson's castToInt reads it). */
function javaInt(value: JsonValue, field: string, offset: number): number | null {
  if (value === null) return null;
  let n: number;
  if (value instanceof JsonNumber) {
    n = value.integral ? Number(value.raw) : Math.trunc(Number(value.raw));
  } else if (typeof value === 'string') {
    const t = value.replace(/,/g, '');
    if (t === '' || t === 'null' || t === 'NULL') return null;
    if (!/^[+-]?\d+$/.test(t)) throw new RemotingDecodeError(`JSON header ${field} is not an integer: ${t}`, offset);
    n = Number(t);
  } else {
    throw new RemotingDecodeError(`JSON header ${field} is not a number`, offset);
  }
  if (!Number.isFinite(n) || n < -0x80000000 || n > 0x7fffffff)
    throw new RemotingDecodeError(`JSON header ${field} is outside the 32-bit range`, offset);
  return n;
}

/** The language: an enum name (unknown names read as null) or an ordinal. */
function javaLanguage(value: JsonValue, offset: number): LanguageName | null {
  if (value === null) return null;
  if (typeof value === 'string') return Object.hasOwn(LanguageCode, value) ? (value as LanguageName) : null;
  if (value instanceof JsonNumber && value.integral) {
    const name = languageName(Number(value.raw));
    if (name === null) throw new RemotingDecodeError(`JSON header language ordinal ${value.raw} is unknown`, offset);
    return name;
  }
  throw new RemotingDecodeError('JSON header language is neither a name nor an ordinal', offset);
}

function javaStringMap(value: JsonValue, offset: number): ExtFields | null {
  if (value === null) return null;
  if (!(value instanceof Map)) throw new RemotingDecodeError('JSON header extFields is not an object', offset);
  const out: ExtFields = {};
  // fastjson fills a `new HashMap()` (16 buckets to start with).
  for (const k of javaHashMapOrder([...value.keys()], 16)) setOwn(out, k, jsonValueToJavaString(value.get(k) ?? null));
  return out;
}
