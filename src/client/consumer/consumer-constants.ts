/**
 * Public consumer enums (RocketMQ's names and values as strings, which is also how the heartbeat's
 * ConsumerData carries them).
 * @pure
 */

/** What a concurrently-consuming listener returns (RocketMQ's ConsumeConcurrentlyStatus). */
export const ConsumeConcurrentlyStatus = Object.freeze({
  /** The whole batch (up to `context.ackIndex`) was consumed. */
  CONSUME_SUCCESS: 'CONSUME_SUCCESS',
  /** Consume the batch again later: it goes to `%RETRY%<group>` with a growing delay. */
  RECONSUME_LATER: 'RECONSUME_LATER',
} as const);
export type ConsumeConcurrentlyStatus = (typeof ConsumeConcurrentlyStatus)[keyof typeof ConsumeConcurrentlyStatus];

/**
 * Where a group with no committed offset for a queue starts (RocketMQ's ConsumeFromWhere).
 * It applies only when the broker has no offset for the group: an existing group always resumes.
 */
export const ConsumeFromWhere = Object.freeze({
  /** Start at the queue's end (the default). The retry topic starts at 0. */
  CONSUME_FROM_LAST_OFFSET: 'CONSUME_FROM_LAST_OFFSET',
  /** @deprecated RocketMQ alias, behaves as CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST: 'CONSUME_FROM_LAST_OFFSET_AND_FROM_MIN_WHEN_BOOT_FIRST',
  /** @deprecated RocketMQ alias, behaves as CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_MIN_OFFSET: 'CONSUME_FROM_MIN_OFFSET',
  /** @deprecated RocketMQ alias, behaves as CONSUME_FROM_LAST_OFFSET. */
  CONSUME_FROM_MAX_OFFSET: 'CONSUME_FROM_MAX_OFFSET',
  /** Start at offset 0 (moved up to the queue's minimum by the broker's OFFSET_MOVED answer). */
  CONSUME_FROM_FIRST_OFFSET: 'CONSUME_FROM_FIRST_OFFSET',
  /** Start at the first message stored at or after `consumeTimestamp`. */
  CONSUME_FROM_TIMESTAMP: 'CONSUME_FROM_TIMESTAMP',
} as const);
export type ConsumeFromWhere = (typeof ConsumeFromWhere)[keyof typeof ConsumeFromWhere];

/** How a group shares its topics (RocketMQ's MessageModel). */
export const MessageModel = Object.freeze({
  /** Each message goes to one member of the group (queues are divided by rebalance). */
  CLUSTERING: 'CLUSTERING',
  /** Every member gets every message; offsets are kept locally by each member. */
  BROADCASTING: 'BROADCASTING',
} as const);
export type MessageModel = (typeof MessageModel)[keyof typeof MessageModel];
