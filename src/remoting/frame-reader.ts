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
import { ChunkQueue } from './chunk-queue.js';
import { RemotingDecodeError, RemotingFrameTooLargeError } from './remoting-decode-error.js';

/** RocketMQ's default maximum frame, `com.rocketmq.remoting.frameMaxLength`: 16 MiB. */
export const DEFAULT_MAX_FRAME_LENGTH = 16 * 1024 * 1024;

export interface FrameReaderOptions {
  /** Largest frame accepted, in bytes, the 4-byte length included. Default 16 MiB. */
  maxFrameLength?: number | undefined;
  /**
   * The caller reuses each chunk's memory once `push` returns (a socket reading into one buffer):
   * every frame returned is then its own copy, and the part of a frame that has come so far is
   * copied as it arrives. Default false: frames within one chunk are views of it.
   */
  reusesChunks?: boolean | undefined;
}

/** Up to this size (prefix excluded) a frame that has only begun to arrive gets its whole buffer at once. */
const PREALLOCATE_LIMIT = 1024 * 1024;

/**
 * Splits socket data into RocketMQ remoting frames: `push(chunk)` returns every frame completed so
 * far, without its 4-byte length prefix, ready for `decodeRemotingCommand`. A frame longer than
 * `maxFrameLength` (16 MiB by default) fails with a `RemotingDecodeError`.
 */
export class FrameReader {
  readonly maxFrameLength: number;
  readonly #reusesChunks: boolean;
  /** The chunks received (with `reusesChunks`: copies of the parts of the frame being assembled). */
  readonly #queue = new ChunkQueue();
  /**
   * With `reusesChunks`: bytes of the frame being assembled received so far (prefix included), which
   * may lie in #partial or have been read straight from a chunk rather than sit in #queue.
   */
  #assembled = 0;
  /** Length of the frame being assembled (prefix included), or -1 while its prefix is incomplete. */
  #need = -1;
  #failed: RemotingDecodeError | null = null;
  /** With `reusesChunks`: the buffer of the frame being assembled, when it was allocated whole. */
  #partial: Buffer | null = null;

  constructor(options: FrameReaderOptions = {}) {
    const max = options.maxFrameLength ?? DEFAULT_MAX_FRAME_LENGTH;
    if (!Number.isInteger(max) || max < 8 || max > 0x7fffffff + 4)
      throw new InvalidArgumentError('maxFrameLength', `must be an integer between 8 and 2^31+3, got ${String(max)}`);
    this.maxFrameLength = max;
    this.#reusesChunks = options.reusesChunks === true;
  }

  /** Bytes received and not yet returned as a frame. */
  get buffered(): number {
    return this.#reusesChunks ? this.#assembled : this.#queue.length;
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
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (this.#reusesChunks) return this.#pushCopying(buf, frames);
    this.#queue.push(buf);
    for (;;) {
      if (this.#need < 0) {
        if (this.#queue.length < 4) break;
        this.#need = this.#checkLength(this.#queue.peekInt32()) + 4;
      }
      if (this.#queue.length < this.#need) break;
      frames.push(this.#queue.take(this.#need).subarray(4));
      this.#need = -1;
    }
    return frames;
  }

  /** The frame length a prefix announced, or a failure (kept: the reader stays failed). */
  #checkLength(length: number): number {
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
    return length;
  }

  /**
   * `push` for a chunk whose memory is reused afterwards: whole frames are copied out of it, and a
   * frame that continues in later chunks is copied part by part — into its own buffer at once when it
   * is small enough, else (a large announced length allocates nothing before its bytes come) into
   * copies joined when it is complete.
   */
  #pushCopying(chunk: Buffer, frames: Buffer[]): Buffer[] {
    let p = 0;
    while (p < chunk.length) {
      if (this.#need < 0) {
        if (this.#assembled === 0 && chunk.length - p >= 4) {
          this.#need = this.#checkLength(chunk.readInt32BE(p)) + 4;
          p += 4;
          this.#assembled = 4;
        } else {
          // A split length prefix: its bytes wait in #queue (copied) until all four are here.
          const n = Math.min(4 - this.#assembled, chunk.length - p);
          this.#queue.push(Buffer.from(chunk.subarray(p, p + n)));
          this.#assembled += n;
          p += n;
          if (this.#assembled < 4) break;
          const length = this.#queue.peekInt32();
          this.#queue.clear();
          this.#need = this.#checkLength(length) + 4;
        }
        const length = this.#need - 4;
        if (chunk.length - p >= length) {
          frames.push(Buffer.from(chunk.subarray(p, p + length)));
          p += length;
          this.#need = -1;
          this.#assembled = 0;
          continue;
        }
        if (length <= PREALLOCATE_LIMIT) this.#partial = Buffer.allocUnsafe(length);
      }
      const n = Math.min(this.#need - this.#assembled, chunk.length - p);
      const part = chunk.subarray(p, p + n);
      if (this.#partial) this.#partial.set(part, this.#assembled - 4);
      else this.#queue.push(Buffer.from(part));
      this.#assembled += n;
      p += n;
      if (this.#assembled === this.#need) {
        // The queued parts are this reader's own copies, so take's view of a lone part is safe to hand out.
        frames.push(this.#partial ?? this.#queue.take(this.#need - 4));
        this.#partial = null;
        this.#need = -1;
        this.#assembled = 0;
      }
    }
    return frames;
  }

  /** Drops whatever is buffered and forgets a failure (for a new connection). */
  reset(): void {
    this.#partial = null;
    this.#queue.clear();
    this.#assembled = 0;
    this.#need = -1;
    this.#failed = null;
  }
}
