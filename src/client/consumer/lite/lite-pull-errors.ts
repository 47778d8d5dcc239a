/**
 * The errors only the LitePullConsumer throws, beyond the SDK's common ones.
 * @pure
 */
import { RocketMQError } from '../../../common/errors.js';
import type { MessageQueue } from '../../../common/message.js';

/** `seek` to an offset outside the queue's stored range `[minOffset, maxOffset]` (code ERR_OFFSET_OUT_OF_RANGE). */
export class OffsetOutOfRangeError extends RocketMQError {
  readonly messageQueue: MessageQueue;
  readonly offset: number;
  readonly minOffset: number;
  readonly maxOffset: number;

  constructor(messageQueue: MessageQueue, offset: number, minOffset: number, maxOffset: number) {
    super(
      'ERR_OFFSET_OUT_OF_RANGE',
      `seek offset ${offset} is outside [${minOffset}, ${maxOffset}] of ${messageQueue.topic}/${messageQueue.brokerName}/${messageQueue.queueId}`,
    );
    this.messageQueue = { ...messageQueue };
    this.offset = offset;
    this.minOffset = minOffset;
    this.maxOffset = maxOffset;
  }
}
