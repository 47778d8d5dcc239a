/**
 * LitePullConsumer (RocketMQ: DefaultLitePullConsumerImpl): which queues are ours (subscribe or
 * assign), the pull tasks that fill its buffer, and committing and seeking offsets.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export {
  LitePullConsumer,
  type LitePullConsumerEvents,
  type LitePullConsumerState,
  type PollOptions,
  type CommitOffsets,
  type AssignmentChangedEvent,
  type LitePullErrorEvent,
  type LiteFlowControlEvent,
  type LitePullIterateOptions,
} from './lite-pull-consumer.js';
export {
  DEFAULT_LITE_PULL_CONSUMER_OPTIONS,
  type LitePullConsumerOptions,
  type ResolvedLitePullConsumerOptions,
} from './lite-pull-consumer-options.js';
export { OffsetOutOfRangeError } from './lite-pull-errors.js';
