/**
 * The error of the RocketMQ remoting codec and frame reader: bytes that are not a valid remoting
 * command (a lying length, an unknown serialize type, a header that is not RocketMQ's JSON or binary
 * layout). Never retriable: the same bytes fail the same way, so the owner of a connection that
 * produced them closes it.
 *
 * | code | when |
 * |---|---|
 * | `ERR_REMOTING_DECODE` | a malformed frame or header |
 * | `ERR_REMOTING_FRAME_TOO_LARGE` | a frame's length prefix is above the reader's limit (16 MiB by default) |
 * @pure
 */
import { RocketMQError } from '../common/errors.js';

/**
 * Thrown for bytes that are not a valid RocketMQ remoting command or frame; its `code` is
 * `ERR_REMOTING_DECODE` or `ERR_REMOTING_FRAME_TOO_LARGE`. Never retriable: close the connection.
 */
export class RemotingDecodeError extends RocketMQError {
  /** Byte position in the input where decoding failed (in the frame after the 4-byte length). */
  readonly position: number;
  constructor(message: string, position: number, options: { cause?: unknown; code?: string } = {}) {
    super(options.code ?? 'ERR_REMOTING_DECODE', message, { cause: options.cause, retriable: false });
    this.position = position;
  }
}

/** A length prefix above the reader's maximum frame length: the connection must be closed. */
export class RemotingFrameTooLargeError extends RemotingDecodeError {
  /** The frame length the peer announced (length prefix included). */
  readonly frameLength: number;
  /** The reader's limit. */
  readonly maxFrameLength: number;
  constructor(frameLength: number, maxFrameLength: number) {
    super(`frame of ${frameLength} bytes exceeds the maximum frame length ${maxFrameLength}`, 0, {
      code: 'ERR_REMOTING_FRAME_TOO_LARGE',
    });
    this.frameLength = frameLength;
    this.maxFrameLength = maxFrameLength;
  }
}
