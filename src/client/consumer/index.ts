/**
 * What every consumer kind shares (RocketMQ: `impl.consumer`, `consumer.store`,
 * `consumer.rebalance`): RebalanceImpl and the allocation strategies, ProcessQueue, PullAPIWrapper and
 * the decoded pulled batches, PullMessageService, flow control, the offset stores, message selectors,
 * and the pull and POP request wrappers. The kinds live below it (`push/`, `lite/`, `pull/`, `simple/`);
 * this room imports none of them, and they never import each other.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export { MessageSelector, type ExpressionTypeName } from './message-selector.js';
export { PullStatus, type PullResult } from './pull-result.js';
export type { FlowControlReason } from './flow-control.js';
export { ConsumeConcurrentlyStatus, ConsumeFromWhere, MessageModel } from './consumer-constants.js';
export type { OffsetPersistedEvent } from './offset-store.js';
export {
  AllocateMessageQueueAveragely,
  AllocateMessageQueueAveragelyByCircle,
  AllocateMessageQueueConsistentHash,
  IllegalArgumentError,
  type AllocateMessageQueueStrategy,
} from './allocate-message-queue.js';
