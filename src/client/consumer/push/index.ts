/**
 * PushConsumer (RocketMQ: DefaultMQPushConsumerImpl): its pull loop, the concurrent and orderly
 * consume services on one consume core (ConsumeMessageConcurrentlyService,
 * ConsumeMessageOrderlyService), queue locking for orderly consumption, and sending failed messages
 * back to the broker.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export {
  PushConsumer,
  type PushConsumerEvents,
  type PushConsumerListener,
  type PushConsumerShutdownReport,
  type RebalanceEvent,
  type PullErrorEvent,
  type FlowControlEvent,
  type StallEvent,
  type BrokerConnectionEvent,
  type BrokerDisconnectionEvent,
  type UndecodableMessageEvent,
  type PushConsumerState,
  type ReadyEvent,
} from './push-consumer.js';
export {
  DEFAULT_PUSH_CONSUMER_OPTIONS,
  type PushConsumeMode,
  type PushConsumerOptions,
  type ResolvedPushConsumerOptions,
} from './push-consumer-options.js';
export type {
  ConsumeConcurrentlyContext,
  ConsumeFailureEvent,
  MessageListenerConcurrently,
} from './consume-message-concurrently-service.js';
export {
  ConsumeOrderlyStatus,
  type ConsumeOrderlyContext,
  type MessageListenerOrderly,
  type OrderlyListenerOptions,
  type OrderlySuspendEvent,
} from './consume-message-orderly-service.js';
export type { ConsumerLagEvent, QueueLag } from './push-consumer-events.js';
