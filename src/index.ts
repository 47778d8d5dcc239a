/**
 * rocketmq-ts: the client API. The broker, the filter and the codec are separate entry points
 * (`rocketmq-ts/broker`, `rocketmq-ts/filter`, `rocketmq-ts/codec`).
 * @module rocketmq-ts
 */
export type { Message, MessageExt, MessageQueue, HostAddress } from './common/message.js';
export { MessageConst } from './common/message.js';
export {
  RocketMQError,
  InvalidArgumentError,
  DecodeError,
  TransportError,
  StateError,
  StartTimeoutError,
  type RocketMQErrorOptions,
} from './common/errors.js';
export type { Logger } from './common/logger.js';

// ---- client core: producer, pull consumer, selectors, options ----
export { Producer, type SendResult, type SendOptions, type ProducerEvents } from './client/producer/producer.js';
export {
  TransactionProducer,
  LocalTransactionState,
  type TransactionListener,
  type TransactionMessage,
  type TransactionProducerOptions,
  type TransactionSendResult,
} from './client/producer/transaction-producer.js';
export {
  DEFAULT_PRODUCER_OPTIONS,
  type ProducerOptions,
  type ResolvedProducerOptions,
} from './client/producer/producer-options.js';
export { PullConsumer, type PullOptions } from './client/consumer/pull/pull-consumer.js';
export {
  DEFAULT_PULL_CONSUMER_OPTIONS,
  type PullConsumerOptions,
  type ResolvedPullConsumerOptions,
} from './client/consumer/pull/pull-consumer-options.js';
export {
  SimpleConsumer,
  DEFAULT_SIMPLE_CONSUMER_OPTIONS,
  MAX_INVISIBLE_DURATION_MS,
  MAX_RECEIVE_MESSAGE_NUM,
  type ReceivedMessage,
  type SimpleConsumerOptions,
  type ResolvedSimpleConsumerOptions,
} from './client/consumer/simple/index.js';
export {
  DEFAULT_CLIENT_OPTIONS,
  type ClientOptions,
  type ResolvedClientOptions,
} from './client/instance/client-options.js';
export type { Clock, TimerHandle } from './common/clock.js';
export { MessageSelector, type ExpressionTypeName } from './client/consumer/message-selector.js';
export { PullStatus, type PullResult } from './client/consumer/pull-result.js';
export { SendStatus, type BoundaryType } from './client/instance/mq-client-api.js';
export { AbortError, RequestRejectedError, ClosedError } from './remoting/remoting-errors.js';

// ---- push consumer, allocation strategies, consumer enums ----
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
} from './client/consumer/push/push-consumer.js';
export {
  DEFAULT_PUSH_CONSUMER_OPTIONS,
  type PushConsumerOptions,
  type ResolvedPushConsumerOptions,
} from './client/consumer/push/push-consumer-options.js';
export type { FlowControlReason } from './client/consumer/flow-control.js';
export type { SafeEventEmitter } from './client/instance/safe-emitter.js';
export type { ConnectionErrorEvent } from './client/instance/connection-errors.js';
export { ConsumeConcurrentlyStatus, ConsumeFromWhere, MessageModel } from './client/consumer/consumer-constants.js';
export type {
  ConsumeConcurrentlyContext,
  ConsumeFailureEvent,
  MessageListenerConcurrently,
} from './client/consumer/push/consume-message-concurrently-service.js';
export type { OffsetPersistedEvent } from './client/consumer/offset-store.js';
export {
  AllocateMessageQueueAveragely,
  AllocateMessageQueueAveragelyByCircle,
  AllocateMessageQueueConsistentHash,
  IllegalArgumentError,
  type AllocateMessageQueueStrategy,
} from './client/consumer/allocate-message-queue.js';

// ---- orderly consumption and ordered sends ----
export {
  ConsumeOrderlyStatus,
  type ConsumeOrderlyContext,
  type MessageListenerOrderly,
  type OrderlyListenerOptions,
  type OrderlySuspendEvent,
} from './client/consumer/push/consume-message-orderly-service.js';
export {
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
  type MessageQueueSelector,
} from './client/producer/message-queue-selector.js';
// ---- admin client ----
export {
  AdminClient,
  DEFAULT_ADMIN_CLIENT_OPTIONS,
  type AdminClientOptions,
  type ConsumerConnection,
  type ConsumerConnectionInfo,
  type ConsumerProgress,
  type ConsumerQueueProgress,
  type CreateTopicOptions,
  type QueryByKeyOptions,
  type ResetOffsetResult,
  type TopicQueueStatus,
} from './client/admin/admin-client.js';
// ---- client robustness ----
export { BrokerResponseError } from './protocol/response-error.js';
// ---- lite pull consumer ----
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
} from './client/consumer/lite/lite-pull-consumer.js';
export {
  DEFAULT_LITE_PULL_CONSUMER_OPTIONS,
  type LitePullConsumerOptions,
  type ResolvedLitePullConsumerOptions,
} from './client/consumer/lite/lite-pull-consumer-options.js';
export { OffsetOutOfRangeError } from './client/consumer/lite/lite-pull-errors.js';
export { consoleLogger, defaultLogger } from './common/env-logger.js';
export type { ConsumerLagEvent, QueueLag } from './client/consumer/push/push-consumer-events.js';
