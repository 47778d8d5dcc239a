/**
 * The HTTP framing of a command (docs/protocol.md): one binary message per request and per response,
 *
 * | bytes | field |
 * |---|---|
 * | 4 | header length N, unsigned big-endian |
 * | N | header JSON, UTF-8 (request: the command's header fields; response: `{code, remark?, header}`) |
 * | rest | body, raw bytes (no length: it runs to the end) |
 *
 * The header JSON of a request is the command's header object itself; of a response it is
 * `{"code": <response code>, "remark": <string, optional>, "header": {...}}`.
 * @pure
 */
import { DecodeError } from '../common/errors.js';

export const FRAME_CONTENT_TYPE = 'application/x-rocketmq-command';
/** Largest header JSON accepted (bytes). */
export const MAX_FRAME_HEADER_BYTES = 1 << 20;

export interface Frame {
  header: unknown;
  body: Buffer | undefined;
}

export function encodeFrame(header: unknown, body?: Buffer): Buffer {
  // One allocation: the JSON is written in place rather than through a buffer of its own and a concat.
  const json = JSON.stringify(header);
  const n = Buffer.byteLength(json, 'utf8');
  const bodyLength = body ? body.length : 0;
  const out = Buffer.allocUnsafe(4 + n + bodyLength);
  out.writeUInt32BE(n, 0);
  out.write(json, 4, 'utf8');
  if (body && bodyLength > 0) out.set(body, 4 + n);
  return out;
}

/** Decodes a frame; a malformed one throws DecodeError naming what is wrong. */
export function decodeFrame(buf: Buffer): Frame {
  if (buf.length < 4) throw new DecodeError(`frame too short: ${buf.length} bytes, need at least 4`, 0);
  const n = buf.readUInt32BE(0);
  if (n > MAX_FRAME_HEADER_BYTES)
    throw new DecodeError(`frame header length ${n} exceeds ${MAX_FRAME_HEADER_BYTES}`, 0);
  if (4 + n > buf.length) throw new DecodeError(`frame header length ${n} runs past the end (${buf.length} bytes)`, 0);
  let header: unknown;
  try {
    header = n === 0 ? {} : JSON.parse(buf.toString('utf8', 4, 4 + n));
  } catch (e) {
    throw new DecodeError(`frame header is not valid JSON: ${(e as Error).message}`, 4, { cause: e });
  }
  const body = buf.length > 4 + n ? buf.subarray(4 + n) : undefined;
  return { header, body };
}
