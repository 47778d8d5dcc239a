/**
 * Splits a remoting connection's bytes into frames (a 4-byte big-endian length, then that many bytes,
 * as RocketMQ's NettyDecoder reads them) under a byte budget: when a frame's length arrives, the whole
 * frame is reserved from the budget or the frame waits (the listener stops reading) or is refused —
 * before any of its body is buffered. Chunks are kept as they came and joined once, when the frame is
 * complete, never copied into a growing buffer per chunk.
 *
 * A frame longer than one socket read that is still arriving once reserved is gathered into memory of
 * its full length (the reservation already counts it), rather than kept as the socket's read chunks and
 * joined into a new buffer at the end: the chunks then live a moment, and no buffer is made per frame,
 * both of which were scattered through the C allocator's heap, which keeps that memory after a flood.
 * - Up to the pool's largest slot (1 MiB), that memory is a slot of the listener's buffer pool (the pull
 *   bodies'), reused frame after frame: the listener hands it back once the request is answered
 *   (`takePooled`), or it is simply collected.
 * - A larger frame gets a resizable ArrayBuffer of its own, shrunk to nothing when the connection closes
 *   before the frame is complete, so a frame cut short goes back to the OS within a few turns of the event
 *   loop rather than at the next full collection, which an idle broker may not run for a long time.
 */
import { withoutStack } from '../../common/errors.js';
import { RequestCode } from '../../protocol/index.js';
import { isResponse, type RemotingCommand } from '../../remoting/remoting-command.js';
import { type ResizableArrayBuffer, resizableArrayBuffer } from '../../common/resizable-buffer.js';
import { ChunkQueue } from '../../remoting/chunk-queue.js';
import { MAX_POOLED_BYTES, acquirePullBody, releasePullBody } from '../../store/index.js';
import { RemotingDecodeError, RemotingFrameTooLargeError } from '../../remoting/remoting-decode-error.js';

/** What the budget says to a frame of `bytes` (prefix included): take it, wait for room, or refuse it. */
export type Reservation = 'ok' | 'wait' | Error;

/** Frames longer than this (one socket read) that are not complete when reserved are gathered. */
const GATHER_FROM_BYTES = 64 * 1024;

/** Whether a gathered frame of this length is a slot of the buffer pool (else memory of its own). */
const pooled = (frame: Buffer): boolean => frame.length <= MAX_POOLED_BYTES;

/** A buffer of `bytes` over a resizable ArrayBuffer. */
const resizableBuffer = (bytes: number): Buffer => Buffer.from(resizableArrayBuffer(bytes), 0, bytes);

/**
 * Gathered frames waiting to give their memory back. Handing pages back to the OS costs the event loop
 * time in proportion to their number (tens of milliseconds for a few MiB on a busy host); when many
 * connections close at once (a flood timed out together), doing it all at once would hold the loop for
 * seconds, so SHRINK_STEP_BYTES go back per turn.
 */
const toShrink: ResizableArrayBuffer[] = [];
const SHRINK_STEP_BYTES = 256 * 1024;
function shrinkOne(): void {
  const buffer = toShrink[toShrink.length - 1];
  if (buffer) {
    buffer.resize(Math.max(0, buffer.byteLength - SHRINK_STEP_BYTES));
    if (buffer.byteLength === 0) toShrink.pop();
  }
  if (toShrink.length > 0) setImmediate(shrinkOne);
}
function shrinkSoon(buffer: ResizableArrayBuffer): void {
  toShrink.push(buffer);
  if (toShrink.length === 1) setImmediate(shrinkOne);
}

export class FrameIntake {
  readonly maxFrameLength: number;
  readonly #reserve: (bytes: number) => Reservation;
  readonly #queue = new ChunkQueue();
  /** Length of the frame being read (prefix included), or -1 while its prefix is incomplete. */
  #need = -1;
  #reserved = false;
  /** The reserved frame being gathered (prefix included), and its bytes so far. */
  #frame: Buffer | null = null;
  #filled = 0;
  /** The pool slot behind the frame next() last returned, until taken. */
  #lastPooled: Buffer | null = null;

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
    return this.#queue.length + this.#filled;
  }

  /** Whether next() has a frame to give (budget allowing) or a length to refuse: a whole frame has come. */
  get frameReady(): boolean {
    if (this.#frame) return this.#filled >= this.#frame.length;
    if (this.#need >= 0) return this.#queue.length >= this.#need;
    if (this.#queue.length < 4) return false;
    const length = this.#queue.peekInt32();
    return length < 4 || length + 4 > this.maxFrameLength || this.#queue.length >= length + 4;
  }

  /** Whether part of a frame (or of its length) has come and the rest has not. */
  get inProgress(): boolean {
    return this.buffered > 0;
  }

  push(chunk: Buffer): void {
    const frame = this.#frame;
    if (!frame) {
      this.#queue.push(chunk);
      return;
    }
    const room = frame.length - this.#filled;
    if (chunk.length <= room) {
      frame.set(chunk, this.#filled);
      this.#filled += chunk.length;
      return;
    }
    frame.set(chunk.subarray(0, room), this.#filled);
    this.#filled += room;
    this.#queue.push(chunk.subarray(room));
  }

  /**
   * The next complete frame without its length prefix (its whole length, prefix included, was reserved),
   * null when more bytes are needed, 'wait' when the budget has no room for the frame yet (ask again
   * later). Throws a RemotingDecodeError for a length that cannot be a frame or that the budget refuses.
   */
  next(): Buffer | null | 'wait' {
    this.#lastPooled = null;
    if (this.#need < 0) {
      if (this.#queue.length < 4) return null;
      const length = this.#queue.peekInt32();
      if (length < 4) {
        throw withoutStack(
          () =>
            new RemotingDecodeError(
              `frame length ${length} is ${length < 0 ? 'negative' : 'too short for a header length'}`,
              0,
            ),
        );
      }
      if (length + 4 > this.maxFrameLength)
        throw withoutStack(() => new RemotingFrameTooLargeError(length + 4, this.maxFrameLength));
      this.#need = length + 4;
      this.#reserved = false;
    }
    if (!this.#reserved) {
      const r = this.#reserve(this.#need);
      if (r === 'wait') return 'wait';
      if (r instanceof Error) throw r;
      this.#reserved = true;
    }
    const gathered = this.#frame;
    if (gathered) {
      if (this.#filled < gathered.length) return null;
      if (pooled(gathered)) this.#lastPooled = gathered;
      this.#frame = null;
      this.#filled = 0;
      this.#need = -1;
      this.#reserved = false;
      return gathered.subarray(4);
    }
    if (this.#queue.length < this.#need) {
      if (this.#need > GATHER_FROM_BYTES) {
        const frame = this.#need <= MAX_POOLED_BYTES ? acquirePullBody(this.#need) : resizableBuffer(this.#need);
        this.#filled = this.#queue.drainInto(frame, 0);
        this.#frame = frame;
      }
      return null;
    }
    const frame = this.#queue.take(this.#need).subarray(4);
    this.#need = -1;
    this.#reserved = false;
    return frame;
  }

  /**
   * The pool slot that holds the frame next() has just returned (prefix included), or null when that
   * frame is not in one; taking it clears it. Its owner hands it back (`releasePullBody`) once nothing
   * reads the frame any more; a slot never handed back is collected, never reused.
   */
  takePooled(): Buffer | null {
    const slot = this.#lastPooled;
    this.#lastPooled = null;
    return slot;
  }

  /** Length of the frame being read when its reservation is still owed to the budget, else 0. */
  get unreservedLength(): number {
    return this.#need >= 0 && !this.#reserved ? this.#need : 0;
  }

  /** Length reserved for the frame being read, 0 when none is (released by the owner on close). */
  get reservedLength(): number {
    return this.#need >= 0 && this.#reserved ? this.#need : 0;
  }

  /** Drops whatever is buffered (the connection closed); a frame being gathered gives its memory back now. */
  clear(): void {
    if (this.#frame && pooled(this.#frame)) releasePullBody(this.#frame);
    else if (this.#frame) shrinkSoon(this.#frame.buffer as ResizableArrayBuffer);
    this.#frame = null;
    this.#lastPooled = null;
    this.#filled = 0;
    this.#queue.clear();
    this.#need = -1;
    this.#reserved = false;
  }
}

/** Requests whose processors are done with the body when they answer: they copy it into the store. */
const BODY_DONE_WHEN_ANSWERED = new Set<number>([
  RequestCode.SEND_MESSAGE,
  RequestCode.SEND_MESSAGE_V2,
  RequestCode.SEND_BATCH_MESSAGE,
]);

/**
 * The pool slot (`FrameIntake.takePooled`) to hand back once `command`, decoded from it, is answered; or
 * null. Any other command (a response, a request whose processor may keep its body) gets its body copied
 * out, and the slot goes back to the pool at once.
 */
export function slotUntilAnswered(command: RemotingCommand, slot: Buffer | null): Buffer | null {
  if (slot === null) return null;
  if (!isResponse(command.flag) && BODY_DONE_WHEN_ANSWERED.has(command.code)) return slot;
  if (command.body) command.body = Buffer.from(command.body);
  releasePullBody(slot);
  return null;
}
