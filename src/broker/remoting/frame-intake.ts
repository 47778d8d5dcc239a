/**
 * Splits a remoting connection's bytes into frames (a 4-byte big-endian length, then that many bytes,
 * as RocketMQ's NettyDecoder reads them) under a byte budget: when a frame's length arrives, the whole
 * frame is reserved from the budget or the frame waits (the listener stops reading) or is refused —
 * before any of its body is buffered. Chunks are kept as they came and joined once, when the frame is
 * complete, never copied into a growing buffer per chunk.
 */
import { ChunkQueue } from '../../remoting/chunk-queue.js';
import { RemotingDecodeError, RemotingFrameTooLargeError } from '../../remoting/remoting-decode-error.js';

/** What the budget says to a frame of `bytes` (prefix included): take it, wait for room, or refuse it. */
export type Reservation = 'ok' | 'wait' | Error;

export class FrameIntake {
  readonly maxFrameLength: number;
  readonly #reserve: (bytes: number) => Reservation;
  readonly #queue = new ChunkQueue();
  /** Length of the frame being read (prefix included), or -1 while its prefix is incomplete. */
  #need = -1;
  #reserved = false;

  /**
   * `reserve` is asked once per frame, with its whole length, as soon as the length is known; a frame
   * it answers 'ok' for is charged to the caller until the caller releases it.
   */
  constructor(maxFrameLength: number, reserve: (bytes: number) => Reservation) {
    this.maxFrameLength = maxFrameLength;
    this.#reserve = reserve;
  }

  /** Bytes received and not yet returned as a frame. */
  get buffered(): number {
    return this.#queue.length;
  }

  /** Whether part of a frame (or of its length) has come and the rest has not. */
  get inProgress(): boolean {
    return this.#queue.length > 0;
  }

  push(chunk: Buffer): void {
    this.#queue.push(chunk);
  }

  /**
   * The next complete frame without its length prefix (its whole length, prefix included, was reserved),
   * null when more bytes are needed, 'wait' when the budget has no room for the frame yet (ask again
   * later). Throws a RemotingDecodeError for a length that cannot be a frame or that the budget refuses.
   */
  next(): Buffer | null | 'wait' {
    if (this.#need < 0) {
      if (this.#queue.length < 4) return null;
      const length = this.#queue.peekInt32();
      if (length < 4) {
        throw new RemotingDecodeError(
          `frame length ${length} is ${length < 0 ? 'negative' : 'too short for a header length'}`,
          0,
        );
      }
      if (length + 4 > this.maxFrameLength) throw new RemotingFrameTooLargeError(length + 4, this.maxFrameLength);
      this.#need = length + 4;
      this.#reserved = false;
    }
    if (!this.#reserved) {
      const r = this.#reserve(this.#need);
      if (r === 'wait') return 'wait';
      if (r instanceof Error) throw r;
      this.#reserved = true;
    }
    if (this.#queue.length < this.#need) return null;
    const frame = this.#queue.take(this.#need).subarray(4);
    this.#need = -1;
    this.#reserved = false;
    return frame;
  }

  /** Length of the frame being read when its reservation is still owed to the budget, else 0. */
  get unreservedLength(): number {
    return this.#need >= 0 && !this.#reserved ? this.#need : 0;
  }

  /** Length reserved for the frame being read, 0 when none is (released by the owner on close). */
  get reservedLength(): number {
    return this.#need >= 0 && this.#reserved ? this.#need : 0;
  }

  /** Drops whatever is buffered (the connection closed). */
  clear(): void {
    this.#queue.clear();
    this.#need = -1;
    this.#reserved = false;
  }
}
