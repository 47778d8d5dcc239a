/**
 * Splits socket data into RocketMQ remoting frames, as Netty's LengthFieldBasedFrameDecoder under
 * RocketMQ's NettyDecoder does: a 4-byte big-endian length, then that many bytes. Each frame is
 * handed over without its length prefix, ready for `decodeRemotingCommand`.
 *
 * A length whose frame (prefix included) is above `maxFrameLength` — RocketMQ's 16 MiB by default —
 * is refused before anything is buffered for it, and so is a length below 4 (no room for the
 * header-length word) or a negative one: the peer is not speaking the protocol, and the owner closes
 * the connection. After an error the reader stays failed.
 * @pure
 */
import { InvalidArgumentError } from '../common/errors.js';
import { RemotingDecodeError, RemotingFrameTooLargeError } from './remoting-decode-error.js';

/** RocketMQ's default maximum frame, `com.rocketmq.remoting.frameMaxLength`: 16 MiB. */
export const DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

export interface FrameReaderOptions {
  /** Largest frame accepted, in bytes, the 4-byte length included. Default 16 MiB. */
  maxFrameLength?: number | undefined;
}

/**
 * Splits socket data into RocketMQ remoting frames: `push(chunk)` returns every frame completed so
 * far, without its 4-byte length prefix, ready for `decodeRemotingCommand`. A frame longer than
 * `maxFrameLength` (16 MiB by default) fails with a `RemotingDecodeError`.
 */
export class FrameReader {
  readonly maxFrameLength: number;
  #chunks: Buffer[] = [];
  #buffered = 0;
  /** Length of the frame being assembled (prefix included), or -1 while its prefix is incomplete. */
  #need = -1;
  #failed: RemotingDecodeError | null = null;

  constructor(options: FrameReaderOptions = {}) {
    const max = options.maxFrameLength ?? DEFAULT_MAX_FRAME_LENGTH;
    if (!Number.isInteger(max) || max < 8 || max > 0x7fffffff + 4)
      throw new InvalidArgumentError('maxFrameLength', `must be an integer between 8 and 2^31+3, got ${String(max)}`);
    this.maxFrameLength = max;
  }

  /** Bytes received and not yet returned as a frame. */
  get buffered(): number {
    return this.#buffered;
  }

  /**
   * Adds a chunk and returns every frame it completed, in order (each without its length prefix;
   * a frame that arrived within one chunk is a view of it). Throws a `RemotingDecodeError` — a
   * `RemotingFrameTooLargeError` for an oversized frame — when the data cannot be remoting frames.
   */
  push(chunk: Uint8Array): Buffer[] {
    if (this.#failed) throw this.#failed;
    const frames: Buffer[] = [];
    if (chunk.length === 0) return frames;
    this.#chunks.push(Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength));
    this.#buffered += chunk.length;
    for (;;) {
      if (this.#need < 0) {
        if (this.#buffered < 4) break;
        const length = this.#peekInt32();
        if (length < 4) {
          this.#failed = new RemotingDecodeError(
            `frame length ${length} is ${length < 0 ? 'negative' : 'too short for a header length'}`,
            0,
          );
          throw this.#failed;
        }
        if (length + 4 > this.maxFrameLength) {
          this.#failed = new RemotingFrameTooLargeError(length + 4, this.maxFrameLength);
          throw this.#failed;
        }
        this.#need = length + 4;
      }
      if (this.#buffered < this.#need) break;
      frames.push(this.#take(this.#need).subarray(4));
      this.#need = -1;
    }
    return frames;
  }

  /** Drops whatever is buffered and forgets a failure (for a new connection). */
  reset(): void {
    this.#chunks = [];
    this.#buffered = 0;
    this.#need = -1;
    this.#failed = null;
  }

  #peekInt32(): number {
    const first = this.#chunks[0] as Buffer;
    if (first.length >= 4) return first.readInt32BE(0);
    const head = Buffer.allocUnsafe(4);
    let filled = 0;
    for (const c of this.#chunks) {
      filled += c.copy(head, filled, 0, Math.min(c.length, 4 - filled));
      if (filled === 4) break;
    }
    return head.readInt32BE(0);
  }

  /** Removes the first `n` buffered bytes and returns them (a view when they lie in one chunk). */
  #take(n: number): Buffer {
    this.#buffered -= n;
    const first = this.#chunks[0] as Buffer;
    if (first.length >= n) {
      if (first.length === n) this.#chunks.shift();
      else this.#chunks[0] = first.subarray(n);
      return first.subarray(0, n);
    }
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    while (filled < n) {
      const c = this.#chunks[0] as Buffer;
      const used = Math.min(c.length, n - filled);
      c.copy(out, filled, 0, used);
      filled += used;
      if (used === c.length) this.#chunks.shift();
      else this.#chunks[0] = c.subarray(used);
    }
    return out;
  }
}
