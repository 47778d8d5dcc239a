/**
 * The remoting command as data: the decoded command, its custom header, and the checked form both
 * header codecs (JSON and RocketMQ's binary layout) write. Kept apart from the frame codec in
 * remoting-command.ts so that the header codecs, which the frame codec calls, can share these shapes
 * without importing it back.
 * @pure
 */
import type { LanguageName } from './language-code.js';

/**
 * A command's custom header as strings. Decoding gives `null` for a value RocketMQ reads as null (an
 * empty value in a binary header, an explicit `null` in a JSON one); encoding skips null and
 * undefined values, as RocketMQ skips null ones.
 */
export type ExtFields = Record<string, string | null>;

export interface RemotingCommand {
  /** The request code, or in a response the response code. */
  code: number;
  /** Who made the command; `null` when a decoded command names a language RocketMQ does not know. */
  language: LanguageName | null;
  /** The sender's `MQVersion` ordinal (RocketMQ 5.3.3 sends 479). */
  version: number;
  /** Correlates a response with its request: a response carries the opaque of its request. */
  opaque: number;
  /** Bit 0: response; bit 1: oneway. Other bits are carried as they are. */
  flag: number;
  /** Error text, or the GetMessageStatus name on a pull response; null when absent. */
  remark: string | null;
  /** The custom header; null when absent (`{}` is an empty header, which JSON keeps). */
  extFields: ExtFields | null;
  /** The body, or null when there is none. */
  body: Buffer | null;
}

/** A command ready to be serialized: every part checked, extFields as ordered entries. */
export interface NormalizedCommand {
  code: number;
  language: LanguageName | null;
  version: number;
  opaque: number;
  flag: number;
  remark: string | null;
  /** Keys and values in turn: `[key0, value0, key1, value1, ...]`. */
  extFields: string[] | null;
}

/** Assigns `obj[key]` as an own data property, even for keys such as `__proto__`. */
export function setOwn(obj: ExtFields, key: string, value: string | null): void {
  if (key === '__proto__')
    Object.defineProperty(obj, key, { value, enumerable: true, writable: true, configurable: true });
  else obj[key] = value;
}
