/**
 * The push consumer's pre-pull checks (RocketMQ: DefaultMQPushConsumerImpl.pullMessage)
 * as one decision function: drop the request, pull now, or try again later after a delay. The order
 * of the checks and the delays are RocketMQ's.
 * @pure
 */

/** RocketMQ: PULL_TIME_DELAY_MILLS_WHEN_CACHE_FLOW_CONTROL. */
export const PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL = 50;
/** RocketMQ: PULL_TIME_DELAY_MILLS_WHEN_SUSPEND (a paused consumer). */
export const PULL_TIME_DELAY_MS_WHEN_SUSPEND = 1000;
/** RocketMQ: PULL_TIME_DELAY_MILLS_WHEN_BROKER_FLOW_CONTROL (response code FLOW_CONTROL 215). */
export const PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL = 20;

const MIB = 1024 * 1024;

export type FlowControlReason =
  | 'dropped'
  | 'notRunning'
  | 'paused'
  | 'cachedMessageCount'
  | 'cachedMessageSize'
  | 'consumeSpan'
  | 'notLocked'
  | 'noSubscription';

export type PullDecision =
  | { action: 'drop'; reason: 'dropped' }
  | { action: 'pull' }
  | { action: 'later'; delayMs: number; reason: Exclude<FlowControlReason, 'dropped'> };

export interface PullCheckInput {
  dropped: boolean;
  running: boolean;
  paused: boolean;
  /** ProcessQueue.msgCount */
  msgCount: number;
  /** ProcessQueue.msgSize (body bytes) */
  msgSize: number;
  /** ProcessQueue.getMaxSpan() */
  maxSpan: number;
  hasSubscription: boolean;
  /** Per-queue message limit (pullThresholdForQueue, or the per-queue share of the topic limit). */
  pullThresholdForQueue: number;
  /** Per-queue size limit in MiB. */
  pullThresholdSizeForQueueMiB: number;
  consumeConcurrentlyMaxSpan: number;
  /**
   * Orderly consumption only: whether this client holds the queue's broker lock (CLUSTERING). Left
   * undefined for concurrent consumption, where the span is checked instead.
   */
  orderlyLocked?: boolean | undefined;
  /** Delay used when the consumer is not running (pullTimeDelayMillsWhenException). */
  pullTimeDelayMillsWhenException: number;
}

/**
 * RocketMQ's checks in order: dropped → the request dies; not running → later (exception delay);
 * paused → later 1000; cached count above the limit → later 50; cached size (whole MiB, integer
 * division as in Java) above the limit → later 50; concurrent: span above consumeConcurrentlyMaxSpan →
 * later 50; orderly: lock not held → later 1000;
 * no subscription for the topic → later (exception delay); otherwise pull.
 */
export function decidePull(s: PullCheckInput): PullDecision {
  if (s.dropped) return { action: 'drop', reason: 'dropped' };
  if (!s.running) return { action: 'later', delayMs: s.pullTimeDelayMillsWhenException, reason: 'notRunning' };
  if (s.paused) return { action: 'later', delayMs: PULL_TIME_DELAY_MS_WHEN_SUSPEND, reason: 'paused' };
  if (s.msgCount > s.pullThresholdForQueue) {
    return { action: 'later', delayMs: PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL, reason: 'cachedMessageCount' };
  }
  if (Math.floor(s.msgSize / MIB) > s.pullThresholdSizeForQueueMiB) {
    return { action: 'later', delayMs: PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL, reason: 'cachedMessageSize' };
  }
  if (s.orderlyLocked === undefined) {
    if (s.maxSpan > s.consumeConcurrentlyMaxSpan) {
      return { action: 'later', delayMs: PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL, reason: 'consumeSpan' };
    }
  } else if (!s.orderlyLocked) {
    // RocketMQ: an orderly queue is pulled only while its broker lock is held.
    return { action: 'later', delayMs: PULL_TIME_DELAY_MS_WHEN_SUSPEND, reason: 'notLocked' };
  }
  if (!s.hasSubscription) {
    return { action: 'later', delayMs: s.pullTimeDelayMillsWhenException, reason: 'noSubscription' };
  }
  return PULL;
}

/** The answer when nothing holds the pull back: one frozen object, not one per pull. */
const PULL: PullDecision = Object.freeze({ action: 'pull' });

/**
 * RocketMQ: RebalancePushImpl.messageQueueChanged — a topic-wide limit (−1 = off) becomes a per-queue
 * limit `max(1, topicLimit / queueCount)` (integer division). Returns `undefined` when the topic limit
 * is off or there are no queues, meaning "keep the per-queue option".
 */
export function perQueueThreshold(topicLimit: number, queueCount: number): number | undefined {
  if (topicLimit === -1 || queueCount <= 0) return undefined;
  return Math.max(1, Math.trunc(topicLimit / queueCount));
}

/**
 * The per-queue limits `decidePull` compares against: the per-queue options at first, then after each
 * rebalance the per-queue share of a topic-wide limit, when one is set.
 */
export class PullThresholds {
  pullThresholdForQueue: number;
  pullThresholdSizeForQueueMiB: number;

  constructor(
    private readonly o: {
      readonly pullThresholdForQueue: number;
      readonly pullThresholdSizeForQueueMiB: number;
      readonly pullThresholdForTopic: number;
      readonly pullThresholdSizeForTopicMiB: number;
    },
  ) {
    this.pullThresholdForQueue = o.pullThresholdForQueue;
    this.pullThresholdSizeForQueueMiB = o.pullThresholdSizeForQueueMiB;
  }

  /** RocketMQ: RebalancePushImpl.messageQueueChanged, with the number of queues the consumer holds. */
  update(queueCount: number): void {
    const q = perQueueThreshold(this.o.pullThresholdForTopic, queueCount);
    if (q !== undefined) this.pullThresholdForQueue = q;
    const s = perQueueThreshold(this.o.pullThresholdSizeForTopicMiB, queueCount);
    if (s !== undefined) this.pullThresholdSizeForQueueMiB = s;
  }
}
