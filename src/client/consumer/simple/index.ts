/** The SimpleConsumer room: RocketMQ 5's SimpleConsumer over POP. */
export { SimpleConsumer, type ReceivedMessage } from './simple-consumer.js';
export {
  DEFAULT_SIMPLE_CONSUMER_OPTIONS,
  MAX_INVISIBLE_DURATION_MS,
  MAX_RECEIVE_MESSAGE_NUM,
  type ResolvedSimpleConsumerOptions,
  type SimpleConsumerOptions,
} from './simple-consumer-options.js';
