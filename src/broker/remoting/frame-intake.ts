/**
 * Splits a remoting connection's bytes into frames (a 4-byte big-endian length, then that many bytes,
 * as RocketMQ's NettyDecoder reads them) under a byte budget: when a frame's length arrives, the whole
 * frame is reserved from the budget or the frame waits (the listener stops reading) or is refused —
 * before any of its body is buffered. Chunks are kept as they came and joined once, when the frame is
 * complete, never copied into a growing buffer per chunk.
 */
import { RemotingDecodeError, RemotingFrameTooLargeError } from '../../remoting/remoting-decode-error.js';

/** What the budget says to a frame of `bytes` (prefix included): take it, wait for room, or refuse it. */
export type Reservation = 'ok' | 'wait' | Error;

export class FrameIntake {
  readonly maxFrameLength: number;
  readonly #reserve: (bytes: number) => Reservation;
  #chunks: Buffer[] = [];
  #buffered = 0;
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
    return this.#buffered;
  }

  /** Whether part of a frame (or of its length) has come and the rest has not. */
  get inProgress(): boolean {
    return this.#buffered > 0;
  }

  push(chunk: Buffer): void {
    if (chunk.length === 0) return;
    this.#chunks.push(chunk);
    this.#buffered += chunk.length;
  }

  /**
   * The next complete frame without its length prefix (its whole length, prefix included, was reserved),
   * null when more bytes are needed, 'wait' when the budget has no room for the frame yet (ask again
   * later). Throws a RemotingDecodeError for a length that cannot be a frame or that the budget refuses.
   */
  next(): Buffer | null | 'wait' {
    if (this.#need < 0) {
      if (this.#buffered < 4) return null;
      const length = this.#peekInt32();
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
    if (this.#buffered < this.#need) return null;
    const frame = this.#take(this.#need).subarray(4);
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
    this.#chunks = [];
    this.#buffered = 0;
    this.#need = -1;
    this.#reserved = false;
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
