/**
 * Producer and TransactionProducer (RocketMQ: DefaultMQProducerImpl, MQFaultStrategy,
 * TransactionMQProducer): queue selection with latency fault tolerance, the send path, batches and
 * autoBatch, message checks, and transactional sends with the broker's check-back.
 *
 * This file lists what the room offers the package's entry point; the room's files import each
 * other directly, never through it.
 */
export { Producer, type SendResult, type SendOptions, type ProducerEvents } from './producer.js';
export {
  TransactionProducer,
  LocalTransactionState,
  type TransactionListener,
  type TransactionMessage,
  type TransactionProducerOptions,
  type TransactionSendResult,
} from './transaction-producer.js';
export { DEFAULT_PRODUCER_OPTIONS, type ProducerOptions, type ResolvedProducerOptions } from './producer-options.js';
export {
  SelectMessageQueueByHash,
  SelectMessageQueueByRandom,
  type MessageQueueSelector,
} from './message-queue-selector.js';
