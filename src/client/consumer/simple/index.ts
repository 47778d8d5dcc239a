/**
 * SimpleConsumer (RocketMQ 5's SimpleConsumer, over the remoting POP commands): the broker hands
 * each message to whichever member asks and hides it until it is acknowledged, so the group needs no
 * client rebalance.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export { SimpleConsumer, type ReceivedMessage } from './simple-consumer.js';
export {
  DEFAULT_SIMPLE_CONSUMER_OPTIONS,
  MAX_INVISIBLE_DURATION_MS,
  MAX_RECEIVE_MESSAGE_NUM,
  type ResolvedSimpleConsumerOptions,
  type SimpleConsumerOptions,
} from './simple-consumer-options.js';
