/**
 * RocketMQ's remoting command and its frame, byte for byte as Apache RocketMQ's `RemotingCommand`
 * writes and reads it.
 *
 * ```
 * int32  length            4 + headerLength + bodyLength (does not count itself)
 * int32  headerLengthWord  top byte: serialize type (0 JSON, 1 ROCKETMQ); low 24 bits: headerLength
 * byte[] header            fastjson text, or RocketMQ's binary layout (see rocketmq-serializable.ts)
 * byte[] body              whatever remains; no body length is written anywhere
 * ```
 *
 * `encodeRemotingCommand` writes the whole frame; `decodeRemotingCommand` reads what follows the
 * 4-byte length (what a frame reader hands over, and what RocketMQ's `RemotingCommand.decode` gets).
 *
 * Absent versus empty, as RocketMQ has it: a `null` remark or `extFields` is omitted from a JSON
 * header, while `""` and `{}` are written; the binary header writes both as length 0, which reads
 * back as `null`. An empty body is not written and reads back as `null`. Strings are UTF-8, with an
 * unpaired UTF-16 surrogate written as `?` as Java does.
 * @pure
 */
import { InvalidArgumentError } from '../common/errors.js';
import { javaUtf8RoundTrip } from '../common/codec/java-string.js';
import { decodeJsonHeaderText, encodeJsonHeader, plainJsonHeaderLength, writePlainJsonHeader } from './json-header.js';
import { LanguageCode, type LanguageName } from './language-code.js';
import { RemotingDecodeError } from './remoting-decode-error.js';
import { decodeRocketMQHeader, encodeRocketMQHeader } from './rocketmq-serializable.js';
import type { NormalizedCommand, RemotingCommand } from './remoting-command-model.js';

export { LanguageCode, languageName, type LanguageName } from './language-code.js';
export type { ExtFields, NormalizedCommand, RemotingCommand } from './remoting-command-model.js';

/** `'JSON'` (0): fastjson text, RocketMQ's default. `'ROCKETMQ'` (1): RocketMQ's binary header. */
export type SerializeType = 'JSON' | 'ROCKETMQ';
export const SERIALIZE_TYPE_CODE: Readonly<Record<SerializeType, number>> = Object.freeze({ JSON: 0, ROCKETMQ: 1 });

/** What `encodeRemotingCommand` accepts: the command with optional parts left out. */
export interface RemotingCommandInput {
  code: number;
  language?: LanguageName | null | undefined;
  version?: number | undefined;
  opaque: number;
  flag?: number | undefined;
  remark?: string | null | undefined;
  extFields?:
    | Readonly<Record<string, string | null | undefined>>
    | ReadonlyMap<string, string | null | undefined>
    | null
    | undefined;
  body?: Uint8Array | null | undefined;
}

export interface EncodeOptions {
  /** The header serialization. Default `'JSON'`, RocketMQ's default. */
  serializeType?: SerializeType | undefined;
}

/** Flag bit 0 (RocketMQ's RPC_TYPE): the command is a response. */
export const RESPONSE_FLAG = 1;
/** Flag bit 1 (RocketMQ's RPC_ONEWAY): the request expects no response. */
export const ONEWAY_FLAG = 2;

export const isResponse = (flag: number): boolean => (flag & RESPONSE_FLAG) !== 0;
export const isOneway = (flag: number): boolean => (flag & ONEWAY_FLAG) !== 0;
export const markResponse = (flag: number): number => flag | RESPONSE_FLAG;
export const markOneway = (flag: number): number => flag | ONEWAY_FLAG;

/** The header length field holds 24 bits. */
const MAX_HEADER_LENGTH = 0xffffff;

function int32Field(value: unknown, field: string, fallback?: number): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < -0x80000000 || value > 0x7fffffff)
    throw new InvalidArgumentError(`command.${field}`, `must be a 32-bit integer, got ${String(value)}`);
  return value;
}

function addExtField(out: string[], k: unknown, v: unknown): void {
  if (v === null || v === undefined) return;
  if (typeof k !== 'string' || typeof v !== 'string')
    throw new InvalidArgumentError(`command.extFields.${String(k)}`, 'keys and values must be strings');
  out.push(k, v);
}

function normalize(command: RemotingCommandInput): NormalizedCommand {
  if (command === null || typeof command !== 'object')
    throw new InvalidArgumentError('command', 'must be a remoting command object');
  const language = command.language === undefined ? 'JAVA' : command.language;
  if (language !== null && !Object.hasOwn(LanguageCode, language))
    throw new InvalidArgumentError('command.language', `unknown language ${JSON.stringify(language)}`);
  const remark = command.remark ?? null;
  if (remark !== null && typeof remark !== 'string')
    throw new InvalidArgumentError('command.remark', 'must be a string or null');
  let extFields: string[] | null = null;
  const ext = command.extFields;
  if (ext !== null && ext !== undefined) {
    if (typeof ext !== 'object') throw new InvalidArgumentError('command.extFields', 'must be an object or null');
    extFields = [];
    if (ext instanceof Map) {
      for (const [k, v] of ext as ReadonlyMap<unknown, unknown>) addExtField(extFields, k, v);
    } else {
      // for-in over own keys: no entry array per field, as Object.entries would make.
      const fields = ext as Readonly<Record<string, unknown>>;
      for (const k in fields) if (Object.hasOwn(fields, k)) addExtField(extFields, k, fields[k]);
    }
  }
  return {
    code: int32Field(command.code, 'code'),
    language,
    version: int32Field(command.version, 'version', 0),
    opaque: int32Field(command.opaque, 'opaque'),
    flag: int32Field(command.flag, 'flag', 0),
    remark,
    extFields,
  };
}

/**
 * The whole frame of `command`: the 4-byte total length, the serialize type and header length, the
 * header, then the body. Throws an `InvalidArgumentError` naming the field for a command that cannot
 * be written (a code outside 32 bits, a binary header for a command whose language is unknown).
 */
export function encodeRemotingCommand(command: RemotingCommandInput, options: EncodeOptions = {}): Buffer {
  const serializeType = options.serializeType ?? 'JSON';
  if (serializeType !== 'JSON' && serializeType !== 'ROCKETMQ')
    throw new InvalidArgumentError('serializeType', `must be 'JSON' or 'ROCKETMQ', got ${String(serializeType)}`);
  const cmd = normalize(command);
  const body = command.body ?? null;
  if (body !== null && !(body instanceof Uint8Array))
    throw new InvalidArgumentError('command.body', 'must be a Buffer, a Uint8Array or null');
  // A JSON header is written straight into the frame (no buffer of its own, no copy): byte by byte when
  // all its strings are plain ASCII (what every header of the message path is), else as text. Java writes
  // an unpaired surrogate as '?', so only a text holding a surrogate needs the slower round trip.
  let text: string | null = null;
  let binary: Buffer | null = null;
  let headerLength: number;
  if (serializeType === 'JSON') {
    headerLength = plainJsonHeaderLength(cmd);
    if (headerLength < 0) {
      text = encodeJsonHeader(cmd);
      if (SURROGATE.test(text)) text = javaUtf8RoundTrip(text);
      headerLength = Buffer.byteLength(text, 'utf8');
    }
  } else {
    binary = encodeRocketMQHeader(cmd);
    headerLength = binary.length;
  }
  if (headerLength > MAX_HEADER_LENGTH)
    throw new InvalidArgumentError('command', `header of ${headerLength} bytes exceeds the 24-bit header length`);
  const bodyLength = body?.length ?? 0;
  if (4 + headerLength + bodyLength > 0x7fffffff)
    throw new InvalidArgumentError('command.body', 'the frame would exceed the 32-bit total length');
  const frame = Buffer.allocUnsafe(8 + headerLength + bodyLength);
  frame.writeInt32BE(4 + headerLength + bodyLength, 0);
  frame.writeUInt32BE(((SERIALIZE_TYPE_CODE[serializeType] << 24) | headerLength) >>> 0, 4);
  if (text !== null) frame.write(text, 8, headerLength, 'utf8');
  else if (binary !== null) binary.copy(frame, 8);
  else writePlainJsonHeader(cmd, frame, 8);
  if (body !== null && bodyLength > 0) frame.set(body, 8 + headerLength);
  return frame;
}

/** Any UTF-16 surrogate (paired or not): a header text without one encodes as Node's UTF-8 does. */
const SURROGATE = /[\uD800-\uDFFF]/;

/** The serialize type named by a frame's header-length word, or null for a type RocketMQ does not know. */
export function frameSerializeType(frame: Uint8Array): SerializeType | null {
  if (frame.length < 4) return null;
  const type = frame[0];
  return type === 0 ? 'JSON' : type === 1 ? 'ROCKETMQ' : null;
}

/**
 * Decodes what follows a frame's 4-byte total length. The body is a view of `frame` (no copy).
 * Throws a `RemotingDecodeError` for anything RocketMQ would refuse: a frame shorter than the
 * header-length word, a serialize type other than 0 or 1, a header length beyond the frame, a JSON
 * header that is not an object, a binary header whose lengths do not fit.
 */
export function decodeRemotingCommand(frame: Uint8Array): RemotingCommand {
  if (!(frame instanceof Uint8Array)) throw new RemotingDecodeError('a frame must be a Buffer or Uint8Array', 0);
  const buf = Buffer.isBuffer(frame) ? frame : Buffer.from(frame.buffer, frame.byteOffset, frame.byteLength);
  if (buf.length < 4) throw new RemotingDecodeError(`frame of ${buf.length} bytes has no header length`, 0);
  const word = buf.readUInt32BE(0);
  const headerLength = word & 0xffffff;
  const type = word >>> 24;
  if (headerLength > buf.length - 4)
    throw new RemotingDecodeError(`bad header length: ${headerLength} (frame has ${buf.length - 4} bytes after it)`, 0);
  if (type === 0) {
    // Invalid UTF-8 becomes U+FFFD, as in Java's decoder.
    const bodyStart = 4 + headerLength;
    const cmd = decodeJsonHeaderText(buf.toString('utf8', 4, bodyStart), 4);
    cmd.body = bodyStart < buf.length ? buf.subarray(bodyStart) : null;
    return cmd;
  }
  if (type === 1) {
    // RocketMQ reads the binary header from the frame as a stream and then the body from wherever the
    // header ended; its length is what the header-length word leaves. Reproduced as it is.
    const { command, end } = decodeRocketMQHeader(buf, 4, headerLength);
    const bodyLength = buf.length - 4 - headerLength;
    if (bodyLength > 0) {
      if (end + bodyLength > buf.length)
        throw new RemotingDecodeError(`binary header overruns its length ${headerLength}: the body does not fit`, end);
      command.body = buf.subarray(end, end + bodyLength);
    }
    return command;
  }
  throw new RemotingDecodeError(`unknown serialize type ${type} (0 JSON and 1 ROCKETMQ are defined)`, 0);
}
