/**
 * The types of orderly consumption (RocketMQ's ConsumeOrderlyStatus, ConsumeOrderlyContext and
 * MessageListenerOrderly), the orderly service's dependencies, and the per-queue state its two modes
 * (per queue, per key) share.
 */
import type { MsgTrace } from '../../trace/trace-hooks.js';
import type { ConsumerTelemetry } from '../../telemetry/index.js';
import type { Clock, TimerHandle } from '../../../common/clock.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import type { MessageModel } from '../consumer-constants.js';
import type { OffsetStore } from '../offset-store.js';
import type { ProcessQueue } from '../process-queue.js';

/** What an orderly listener returns (RocketMQ's ConsumeOrderlyStatus). */
export const ConsumeOrderlyStatus = Object.freeze({
  /** The batch was consumed; its offsets may be committed. */
  SUCCESS: 'SUCCESS',
  /** Consume the same batch again after `suspendCurrentQueueTimeMillis`, holding back the queue (or key). */
  SUSPEND_CURRENT_QUEUE_A_MOMENT: 'SUSPEND_CURRENT_QUEUE_A_MOMENT',
  /** With `context.autoCommit = false`: commit every message taken so far. */
  COMMIT: 'COMMIT',
  /** With `context.autoCommit = false`: give back every message taken since the last commit and retry them. */
  ROLLBACK: 'ROLLBACK',
} as const);
export type ConsumeOrderlyStatus = (typeof ConsumeOrderlyStatus)[keyof typeof ConsumeOrderlyStatus];

/** RocketMQ's ConsumeOrderlyContext. */
export interface ConsumeOrderlyContext {
  readonly messageQueue: MessageQueue;
  /**
   * true (default): SUCCESS commits the batch. false: SUCCESS keeps the batch taken and uncommitted;
   * COMMIT commits everything taken so far and ROLLBACK gives it back (per-queue mode only).
   */
  autoCommit: boolean;
  /** This batch's suspend time when it is suspended, ms; -1 (default) uses the consumer's option. */
  suspendCurrentQueueTimeMillis: number;
}

/**
 * The orderly listener: resolving with nothing (`undefined`) is SUCCESS; a throw, a rejection or a value
 * that is not a status (`null` included) is logged and counts as SUSPEND_CURRENT_QUEUE_A_MOMENT.
 */
export type MessageListenerOrderly = (
  messages: MessageExt[],
  context: ConsumeOrderlyContext,
) => ConsumeOrderlyStatus | void | Promise<ConsumeOrderlyStatus | void>;

export interface OrderlyListenerOptions {
  /**
   * Per-key ordering inside a queue: up to this many keys of one queue are consumed at once, each key
   * one message at a time in order. Unset: RocketMQ's per-queue ordering.
   */
  keyConcurrency?: number | undefined;
}

/** A batch that was suspended: it is consumed again later, or was sent to the dead-letter queue. */
export interface OrderlySuspendEvent {
  messageQueue: MessageQueue;
  messages: MessageExt[];
  /** What the listener threw or rejected with, if it did. */
  error?: unknown;
  /** Messages that reached `maxReconsumeTimes` and were sent to `%DLQ%<group>`. */
  deadLettered: number;
  /** When the remaining messages are consumed again, ms. */
  suspendMs: number;
}

export interface ConsumeOrderlyServiceDeps {
  consumerGroup: string;
  messageModel: MessageModel;
  consumeThreadMax: number;
  consumeMessageBatchMaxSize: number;
  /** RocketMQ: suspendCurrentQueueTimeMillis, default 1000. */
  suspendCurrentQueueTimeMillis: number;
  /** Failures after which a message goes to the dead-letter queue (RocketMQ orderly: -1 → never). */
  maxReconsumeTimes: number;
  listener: MessageListenerOrderly;
  keyConcurrency: number | undefined;
  /** A queue whose lock was not confirmed for this long is not consumed, ms (RocketMQ: 30 s). */
  lockMaxLiveTimeMs: number;
  /** OpenTelemetry around each listener call (consume-core's runListener). */
  telemetry?: ConsumerTelemetry | undefined;
  offsetStore: OffsetStore;
  clock: Clock;
  logger: Logger;
  /** Locks one queue on its broker; resolves true when this client holds the lock. */
  lockOne(mq: MessageQueue): Promise<boolean>;
  /** Sends one message to the group's dead-letter queue; resolves true when it was stored. */
  sendToDeadLetterQueue(msg: MessageExt, mq: MessageQueue): Promise<boolean>;
  onSuspend(e: OrderlySuspendEvent): void;
  /** The consumer's message trace, when `enableMsgTrace` is on. */
  trace?: MsgTrace | undefined;
}

/** One key's messages in offset order (per-key mode), or the whole queue (per-queue mode: key ''). */
export interface Lane {
  readonly key: string;
  pending: MessageExt[];
  head: number;
  /** In the ready list or being consumed. */
  scheduled: boolean;
  /** Waiting for a suspend timer. */
  waiting: boolean;
}

export interface QueueState {
  readonly mq: MessageQueue;
  readonly pq: ProcessQueue;
  /** Per-key mode: key → lane. */
  readonly lanes: Map<string, Lane>;
  /** Per-key mode: lanes ready to run. */
  readonly ready: Lane[];
  /** Highest offset handed to a lane (per-key) — or taken and not yet committed (per-queue). */
  dispatchedUpTo: number;
  /** Per-queue mode: messages taken since the last commit (autoCommit false keeps them). */
  taken: MessageExt[];
  /** Per-queue mode: in the ready list of queues or being consumed. */
  scheduled: boolean;
  /** Listener calls running now for this queue. */
  inflight: number;
  workers: number;
  /** A lock retry is pending. */
  lockTimer: TimerHandle | undefined;
  readonly idleWaiters: (() => void)[];
}
