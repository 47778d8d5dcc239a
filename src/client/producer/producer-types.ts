/**
 * The types the Producer's parts share: what a send takes, what it resolves with, and the events a
 * producer emits. They live apart from the Producer class so its send and batch paths can name them
 * without importing the class.
 */
import type { MessageQueue } from '../../common/message.js';
import type { ConnectionErrorEvent } from '../instance/connection-errors.js';
import type { SendStatus } from '../instance/mq-client-api.js';
import type { MessageQueueSelector } from './message-queue-selector.js';

export interface SendResult {
  sendStatus: SendStatus;
  /** The client-side message id (UNIQ_KEY); comma-separated for a batch. */
  msgId: string;
  /** The broker's offset message id (store host + commit-log offset); comma-separated for a batch. */
  offsetMsgId: string;
  messageQueue: MessageQueue;
  /** Queue offset of the (first) message. */
  queueOffset: number;
  transactionId?: string | undefined;
}

export interface SendOptions {
  /** Aborts the send (and its retries). */
  signal?: AbortSignal | undefined;
  /** Deadline of this send, retries included, ms. Default: the producer's sendMsgTimeoutMs. */
  timeoutMs?: number | undefined;
  /**
   * Ordered send: every message with this key goes to the same queue (RocketMQ's
   * SelectMessageQueueByHash over the key), so consumers see one key's messages in send order. The key
   * travels with the message (property `__SHARDINGKEY`), and orderly consumers with `keyConcurrency`
   * order by it. A failed attempt is retried on the same queue only, so retries never reorder — send a
   * key's next message after the previous one resolved.
   */
  shardingKey?: string | undefined;
  /** Ordered send with your own choice of queue: `selector(queues, message, arg)`. Not with `shardingKey`. */
  selector?: MessageQueueSelector | undefined;
  /** The argument given to `selector`. */
  arg?: unknown;
}

export interface ProducerEvents {
  /** One attempt failed; the send may still succeed on another queue. A batch emits once per attempt. */
  sendError: [err: unknown, info: { topic: string; messageQueue: MessageQueue | undefined; attempt: number }];
  /** A NameServer or broker that has not answered yet could not be reached (once per address). */
  connectionError: [event: ConnectionErrorEvent];
}
