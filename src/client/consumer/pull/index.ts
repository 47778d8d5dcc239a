/**
 * PullConsumer (RocketMQ: DefaultMQPullConsumer): one pull at a time, the caller keeps the offsets.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export { PullConsumer, type PullOptions } from './pull-consumer.js';
export {
  DEFAULT_PULL_CONSUMER_OPTIONS,
  type PullConsumerOptions,
  type ResolvedPullConsumerOptions,
} from './pull-consumer-options.js';
