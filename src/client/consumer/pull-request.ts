/**
 * PullRequest: what PullMessageService hands to the push consumer's pullMessage (RocketMQ's
 * PullRequest). One object per assigned queue; every path re-queues the same object
 * exactly once, so only one pull per queue is ever in flight.
 * @pure
 */
import type { MessageQueue } from '../../common/message.js';
import type { ProcessQueue } from './process-queue.js';

export interface PullRequest {
  readonly consumerGroup: string;
  readonly messageQueue: MessageQueue;
  readonly processQueue: ProcessQueue;
  /** The queue offset the next pull reads from. */
  nextOffset: number;
}

export function createPullRequest(
  consumerGroup: string,
  messageQueue: MessageQueue,
  processQueue: ProcessQueue,
  nextOffset: number,
): PullRequest {
  return { consumerGroup, messageQueue, processQueue, nextOffset };
}
