/**
 * The producer's batch body (SEND_BATCH_MESSAGE), NOT the stored-record format: per message
 * `[int TOTALSIZE][int MAGIC = 0][int BODYCRC = 0][int FLAG][int BODYLENGTH + BODY][short PROPSLENGTH + PROPS]`.
 * RocketMQ: MessageDecoder.encodeMessage / encodeMessages / decodeMessages (for batches).
 */
import { DecodeError, InvalidArgumentError } from '../errors.js';
import { isInt32Like, readInt16, readInt32, writeInt16, writeInt32 } from './bytes.js';
import { MAX_PROPERTIES_BYTES } from './constants.js';
import { javaUtf8RoundTrip } from './java-string.js';
import { messageProperties2String, string2messageProperties, type PropertiesInput } from './properties.js';

/** One message of a batch body: what RocketMQ's batch encoding keeps of a Message. */
export interface BatchBodyMessage {
  body: Uint8Array | null;
  flag?: number;
  /** The properties, or a string already joined by `messageProperties2String`. */
  properties?: PropertiesInput | string | null;
}

/** Bytes of a batch element besides its body and properties: five ints and the properties length. */
export const BATCH_ELEMENT_OVERHEAD = 22;

/** One message decoded from a batch body. `properties` is always an object (RocketMQ decodes an empty map). */
export interface DecodedBatchMessage {
  flag: number;
  body: Buffer;
  properties: Record<string, string>;
}

interface Prepared {
  flag: number;
  body: Uint8Array;
  props: string;
  propsLength: number;
  size: number;
}

function prepare(m: BatchBodyMessage, i: number): Prepared {
  if (m === null || typeof m !== 'object') throw new InvalidArgumentError(`messages[${i}]`, 'must be an object');
  const body = m.body ?? new Uint8Array(0);
  if (!(body instanceof Uint8Array)) throw new InvalidArgumentError(`messages[${i}].body`, 'must be a Buffer or null');
  const flag = m.flag ?? 0;
  if (!isInt32Like(flag)) throw new InvalidArgumentError(`messages[${i}].flag`, 'must be a 32-bit integer');
  const joined = typeof m.properties === 'string' ? m.properties : messageProperties2String(m.properties);
  const props = javaUtf8RoundTrip(joined);
  const propsLength = Buffer.byteLength(props, 'utf8');
  if (propsLength > MAX_PROPERTIES_BYTES) {
    throw new InvalidArgumentError(
      `messages[${i}].properties`,
      `${propsLength} bytes is more than ${MAX_PROPERTIES_BYTES}`,
    );
  }
  return { flag, body, props, propsLength, size: BATCH_ELEMENT_OVERHEAD + body.length + propsLength };
}

function write(b: Buffer, p: number, m: Prepared): number {
  writeInt32(b, p, m.size);
  writeInt32(b, p + 4, 0);
  writeInt32(b, p + 8, 0);
  writeInt32(b, p + 12, m.flag);
  writeInt32(b, p + 16, m.body.length);
  b.set(m.body, p + 20);
  let q = p + 20 + m.body.length;
  writeInt16(b, q, m.propsLength);
  q += 2;
  if (m.propsLength > 0) b.write(m.props, q, m.propsLength, 'utf8');
  return q + m.propsLength;
}

/** One message in the batch element format (RocketMQ: MessageDecoder.encodeMessage). */
export function encodeBatchBodyMessage(message: BatchBodyMessage): Buffer {
  const m = prepare(message, 0);
  const b = Buffer.allocUnsafe(m.size);
  write(b, 0, m);
  return b;
}

/** A whole batch body (RocketMQ: MessageDecoder.encodeMessages). */
export function encodeBatchBody(messages: readonly BatchBodyMessage[]): Buffer {
  const prepared = messages.map(prepare);
  const b = Buffer.allocUnsafe(prepared.reduce((n, m) => n + m.size, 0));
  let p = 0;
  for (const m of prepared) p = write(b, p, m);
  return b;
}

/**
 * Splits a batch body (RocketMQ: MessageDecoder.decodeMessages). Like RocketMQ, fields are read in
 * sequence and TOTALSIZE is not used for framing; a truncated or negative length throws DecodeError.
 * Bodies are copies.
 */
export function decodeBatchBody(buffer: Uint8Array): DecodedBatchMessage[] {
  if (!(buffer instanceof Uint8Array)) throw new InvalidArgumentError('buffer', 'must be a Buffer or Uint8Array');
  const b = Buffer.isBuffer(buffer) ? buffer : Buffer.from(buffer.buffer, buffer.byteOffset, buffer.byteLength);
  const out: DecodedBatchMessage[] = [];
  let p = 0;
  while (p < b.length) {
    const start = p;
    if (p + 20 > b.length) throw new DecodeError(`batch message at ${start}: truncated header`, p);
    const flag = readInt32(b, p + 12);
    const bodyLength = readInt32(b, p + 16);
    p += 20;
    if (bodyLength < 0 || bodyLength > b.length - p) {
      throw new DecodeError(`batch message at ${start}: bad body length ${bodyLength}`, p - 4);
    }
    const body = Buffer.allocUnsafe(bodyLength);
    b.copy(body, 0, p, p + bodyLength);
    p += bodyLength;
    if (p + 2 > b.length) throw new DecodeError(`batch message at ${start}: truncated properties length`, p);
    const propsLength = readInt16(b, p);
    p += 2;
    if (propsLength < 0 || propsLength > b.length - p) {
      throw new DecodeError(`batch message at ${start}: bad properties length ${propsLength}`, p - 2);
    }
    const properties = string2messageProperties(b.toString('utf8', p, p + propsLength));
    p += propsLength;
    out.push({ flag, body, properties });
  }
  return out;
}
