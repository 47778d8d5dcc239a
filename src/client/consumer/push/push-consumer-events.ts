/**
 * The types a PushConsumer shows its users: its typed events, its lifecycle state, the listener shapes
 * it accepts and the shutdown report. Exported through `push-consumer.ts` and `src/index.ts`.
 * @pure
 */
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import type { ConsumeFailureEvent, MessageListenerConcurrently } from './consume-message-concurrently-service.js';
import type { OrderlySuspendEvent } from './consume-message-orderly-service.js';
import type { FlowControlReason } from '../flow-control.js';
import type { OffsetPersistedEvent } from '../offset-store.js';
import type { ReadyEvent } from '../consumer-startup.js';
import type { ConnectionErrorEvent } from '../../instance/connection-errors.js';

export interface RebalanceEvent {
  topic: string;
  /** Queues this member started consuming. */
  added: MessageQueue[];
  /** Queues this member stopped consuming. */
  removed: MessageQueue[];
  /** Every queue of the topic this member now holds. */
  assigned: MessageQueue[];
}

export interface PullErrorEvent {
  messageQueue: MessageQueue;
  error: unknown;
  /** When the queue is pulled again, ms. */
  retryInMs: number;
}

export interface FlowControlEvent {
  messageQueue: MessageQueue;
  reason: FlowControlReason;
  msgCount: number;
  /** Body bytes held by the queue. */
  msgSize: number;
  maxSpan: number;
  delayMs: number;
}

export interface StallEvent {
  messageQueue: MessageQueue;
  /** `noConsumeProgress`: messages held and none finished for `idleMs`; `noPull`: no pull for `idleMs`. */
  reason: 'noConsumeProgress' | 'noPull';
  msgCount: number;
  idleMs: number;
}

export interface BrokerConnectionEvent {
  /** The broker's address (its HTTP base URL for the bundled broker). */
  brokerAddr: string;
}

export interface BrokerDisconnectionEvent extends BrokerConnectionEvent {
  /** The failure that showed the broker unreachable (connection refused or reset, timeout). */
  error: unknown;
}

/** This member's lag on one queue (`PushConsumer.lag()`). */
export interface QueueLag {
  mq: MessageQueue;
  /** The queue's max offset on the broker (one past its last message). */
  brokerOffset: number;
  /** The offset this member has consumed up to (what it commits; 0 when none yet). */
  consumerOffset: number;
  /** brokerOffset - consumerOffset: messages not yet consumed. */
  lag: number;
}

/** What `PushConsumer.lag()` answers and the `lag` event carries. */
export interface ConsumerLagEvent {
  consumerGroup: string;
  queues: QueueLag[];
  /** The sum of the queues' lag. */
  total: number;
}

export interface UndecodableMessageEvent {
  messageQueue: MessageQueue;
  /**
   * The message as stored, delivered to the listener like the others: its body is the stored bytes
   * (not decompressed) and its `DECODE_ERROR` property says why it could not be decoded.
   */
  message: MessageExt;
  error: unknown;
}

/** Typed events (eventemitter3). A handler that throws is logged; it never reaches the consumer. */
export interface PushConsumerEvents {
  /** A pulled message's body could not be decoded; it is still delivered, flagged (see the event). */
  undecodableMessage: [event: UndecodableMessageEvent];
  /** A broker answered for the first time, or again after it could not be reached. */
  connected: [event: BrokerConnectionEvent];
  /** A broker that had answered could not be reached; the consumer keeps trying. */
  disconnected: [event: BrokerDisconnectionEvent];
  /** A NameServer or broker that has not answered yet could not be reached (once per address); it keeps trying. */
  connectionError: [event: ConnectionErrorEvent];
  rebalance: [event: RebalanceEvent];
  pullError: [event: PullErrorEvent];
  consumeFailure: [event: ConsumeFailureEvent];
  offsetPersisted: [event: OffsetPersistedEvent];
  flowControl: [event: FlowControlEvent];
  stall: [event: StallEvent];
  /** Orderly consumption: a batch (or a key's message) failed and waits, or went to the dead-letter queue. */
  suspend: [event: OrderlySuspendEvent];
  /** Each `lag()` result, so a dashboard can subscribe where the code that polls cannot reach. */
  lag: [event: ConsumerLagEvent];
  /** The consumer holds its queues and their first pulls are held by the broker (as `ready` resolves). */
  ready: [event: ReadyEvent];
}

export type { ReadyEvent };

/** What `shutdown()` could not finish. */
export interface PushConsumerShutdownReport {
  /** Listener calls still running at the deadline: their messages are not committed and will be re-delivered. */
  unfinishedListeners: number;
  /** Consume requests queued but not started; their messages will be re-delivered. */
  droppedConsumeRequests: number;
  /** Shutdown steps that failed (every step runs even when one fails). */
  errors: { step: string; error: unknown }[];
}

/** A listener function, or an object with RocketMQ's `consumeMessage` method. */
export type PushConsumerListener = MessageListenerConcurrently | { consumeMessage: MessageListenerConcurrently };

/** The lifecycle state of a PushConsumer. */
export type PushConsumerState = 'CREATE_JUST' | 'STARTING' | 'RUNNING' | 'SHUTTING_DOWN' | 'SHUTDOWN' | 'START_FAILED';
