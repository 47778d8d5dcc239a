/**
 * RocketMQ's binary header (`RocketMQSerializable`), all integers big-endian and signed:
 *
 * ```
 * int16 code | int8 language | int16 version | int32 opaque | int32 flag
 * int32 remarkLength    | remark UTF-8
 * int32 extFieldsLength | repeat { int16 keyLength | key UTF-8 | int32 valueLength | value UTF-8 }
 * ```
 *
 * Code and version are cut to 16 bits on the way out (40000 reads back as -25536), as RocketMQ
 * does. A string of length 0 reads as null, so a remark `""`, an empty value and an empty map come
 * back null. Entries with a null value are not written. A repeated key: the last one wins.
 * @pure
 */
import { InvalidArgumentError } from '../common/errors.js';
import { javaUtf8Encode } from '../common/codec/java-string.js';
import { RemotingDecodeError } from './remoting-decode-error.js';
import { javaHashMapOrder } from './java-hash-map.js';
import { LanguageCode, languageName } from './language-code.js';
import { setOwn, type ExtFields, type NormalizedCommand, type RemotingCommand } from './remoting-command-model.js';

/** Fixed part: code 2, language 1, version 2, opaque 4, flag 4, remark length 4, ext length 4. */
const FIXED = 21;

export function encodeRocketMQHeader(cmd: NormalizedCommand): Buffer {
  if (cmd.language === null)
    throw new InvalidArgumentError('command.language', 'a binary (ROCKETMQ) header needs a known language');
  const remark = cmd.remark !== null && cmd.remark.length > 0 ? javaUtf8Encode(cmd.remark) : null;
  const entries: Array<[Buffer, Buffer]> = [];
  let extLength = 0;
  const ext = cmd.extFields ?? [];
  for (let i = 0; i < ext.length; i += 2) {
    const k = ext[i] as string;
    const kb = javaUtf8Encode(k);
    const vb = javaUtf8Encode(ext[i + 1] as string);
    if (kb.length > 0x7fff)
      throw new InvalidArgumentError(
        `command.extFields.${k.slice(0, 40)}`,
        'a key longer than 32767 bytes cannot be written',
      );
    entries.push([kb, vb]);
    extLength += 6 + kb.length + vb.length;
  }
  const out = Buffer.allocUnsafe(FIXED + (remark?.length ?? 0) + extLength);
  let p = out.writeInt16BE((cmd.code << 16) >> 16, 0);
  p = out.writeInt8(LanguageCode[cmd.language], p);
  p = out.writeInt16BE((cmd.version << 16) >> 16, p);
  p = out.writeInt32BE(cmd.opaque, p);
  p = out.writeInt32BE(cmd.flag, p);
  p = out.writeInt32BE(remark?.length ?? 0, p);
  if (remark) p += remark.copy(out, p);
  p = out.writeInt32BE(extLength, p);
  for (const [kb, vb] of entries) {
    p = out.writeInt16BE(kb.length, p);
    p += kb.copy(out, p);
    p = out.writeInt32BE(vb.length, p);
    p += vb.copy(out, p);
  }
  return out;
}

/** A bounds-checked reader over the frame; reading past its end is a decode error, never a crash. */
class Reader {
  constructor(
    readonly buf: Buffer,
    public pos: number,
  ) {}

  need(n: number): void {
    if (n < 0 || this.pos + n > this.buf.length)
      throw new RemotingDecodeError(
        `binary header needs ${n} bytes at ${this.pos}, frame has ${this.buf.length}`,
        this.pos,
      );
  }
  int8(): number {
    this.need(1);
    return this.buf.readInt8(this.pos++);
  }
  int16(): number {
    this.need(2);
    const v = this.buf.readInt16BE(this.pos);
    this.pos += 2;
    return v;
  }
  int32(): number {
    this.need(4);
    const v = this.buf.readInt32BE(this.pos);
    this.pos += 4;
    return v;
  }
  /** RocketMQ's readStr: length 0 is null; a length above `limit` or past the frame is an error. */
  str(len: number, limit: number, what: string): string | null {
    if (len === 0) return null;
    if (len > limit) throw new RemotingDecodeError(`${what} length ${len} exceeds the limit ${limit}`, this.pos);
    if (len < 0) throw new RemotingDecodeError(`${what} length ${len} is negative`, this.pos);
    this.need(len);
    const s = this.buf.toString('utf8', this.pos, this.pos + len);
    this.pos += len;
    return s;
  }
}

/**
 * Reads a binary header starting at `start` of `buf`, checking lengths against `headerLength` as
 * RocketMQ does; returns the command (body unset) and where the header ended.
 */
export function decodeRocketMQHeader(
  buf: Buffer,
  start: number,
  headerLength: number,
): { command: RemotingCommand; end: number } {
  const r = new Reader(buf, start);
  const code = r.int16();
  const language = languageName(r.int8());
  const version = r.int16();
  const opaque = r.int32();
  const flag = r.int32();
  const remark = r.str(r.int32(), headerLength, 'remark');
  const extLength = r.int32();
  let extFields: ExtFields | null = null;
  if (extLength > 0) {
    if (extLength > headerLength)
      throw new RemotingDecodeError(`extFields length ${extLength} exceeds the header length ${headerLength}`, r.pos);
    const entries = new Map<string, string | null>();
    const end = r.pos + extLength;
    while (r.pos < end) {
      const key = r.str(r.int16(), extLength, 'extFields key');
      const value = r.str(r.int32(), extLength, 'extFields value');
      // A null key (length 0) cannot be a property name; RocketMQ skips it when writing too.
      if (key !== null) entries.set(key, value);
    }
    // RocketMQ reads into a `new HashMap<>(128)`.
    extFields = {};
    for (const k of javaHashMapOrder([...entries.keys()], 128)) setOwn(extFields, k, entries.get(k) ?? null);
  }
  return { command: { code, language, version, opaque, flag, remark, extFields, body: null }, end: r.pos };
}
