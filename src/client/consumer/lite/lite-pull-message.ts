/**
 * The LitePullConsumer's pull task (RocketMQ: DefaultLitePullConsumerImpl.PullTaskImpl), one
 * PullRequest per assigned queue driven by the push consumer's PullMessageService. Per run: a paused
 * queue parks its request until `resume`; the consumer-wide buffer bound (pullThresholdForAll), then
 * the per-queue count, size and span bounds (the push consumer's `decidePull`) wait 50 ms; a queue
 * whose start offset is unknown computes it (3 s later on failure); then one held LITE_PULL_MESSAGE
 * (SUSPEND | SUBSCRIPTION | LITE_PULL, subVersion 0 for tags, no commit flag). Found messages go to the
 * ProcessQueue and the buffer, and the next pull goes out at once. A result that arrives after a seek
 * (the queue's request replaced) or after the queue was dropped is thrown away.
 */
import { RocketMQError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageQueue } from '../../../common/message.js';
import { isTagType, type SubscriptionData } from '../../../filter/index.js';
import { buildPullSysFlag } from '../../../protocol/pull-sys-flag.js';
import { ResponseCode } from '../../../protocol/response-code.js';
import type { ConsumeRequestCache, LiteQueue } from './lite-pull-cache.js';
import type { ResolvedLitePullConsumerOptions } from './lite-pull-consumer-options.js';
import {
  decidePull,
  PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL,
  PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL,
  type FlowControlReason,
} from '../flow-control.js';
import type { PullAPIWrapper } from '../pull-api-wrapper.js';
import type { PullMessageService } from '../pull-message-service.js';
import { undecodableReporter, type PulledBatch } from '../pulled-batch.js';
import type { PullRequest } from '../pull-request.js';
import { PullStatus, type PullResult } from '../pull-result.js';

/** RocketMQ: a failed start-offset lookup of a lite pull task is retried after 3 s. */
export const COMPUTE_PULL_FROM_WHERE_RETRY_MS = 3000;

/** A pull failed; it is retried after `retryInMs`. */
export interface LitePullErrorEvent {
  messageQueue: MessageQueue;
  error: unknown;
  retryInMs: number;
}

/** Pulling a queue waits because a buffer bound is reached (reported once per 1000 waits). */
export interface LiteFlowControlEvent {
  messageQueue: MessageQueue;
  reason: FlowControlReason | 'cachedMessageCountForAll';
  msgCount: number;
  msgSize: number;
  bufferedForAll: number;
  delayMs: number;
}

/** The consumer as its pull task sees it. */
export interface LitePullHost {
  readonly options: ResolvedLitePullConsumerOptions;
  readonly logger: Logger;
  readonly cache: ConsumeRequestCache;
  readonly signal: AbortSignal;
  readonly wrapper: PullAPIWrapper;
  readonly pulls: PullMessageService;
  isRunning(): boolean;
  isPaused(q: LiteQueue): boolean;
  queueOf(request: PullRequest): LiteQueue | undefined;
  subscriptionOf(topic: string): SubscriptionData | undefined;
  computePullFromWhere(mq: MessageQueue): Promise<number>;
  onPullError(e: LitePullErrorEvent): void;
  onFlowControl(e: LiteFlowControlEvent): void;
}

let flowControlTimes = 0;

function flowControl(host: LitePullHost, q: LiteQueue, reason: LiteFlowControlEvent['reason'], delayMs: number): void {
  // RocketMQ logs one in 1000 flow-control waits; the event follows the same rhythm.
  if (flowControlTimes++ % 1000 === 0) {
    host.onFlowControl({
      messageQueue: q.mq,
      reason,
      msgCount: q.pq.msgCount,
      msgSize: q.pq.msgSize,
      bufferedForAll: host.cache.messageCount,
      delayMs,
    });
  }
}

/** One run of a queue's pull task; hands `req` back to the PullMessageService exactly once, or lets it die. */
export async function litePullMessage(host: LitePullHost, req: PullRequest): Promise<void> {
  const q = host.queueOf(req);
  if (!q || q.request !== req || q.pq.dropped || !host.isRunning()) return;
  const o = host.options;
  const pq = q.pq;
  pq.lastPullTimestamp = o.clock.now();
  if (host.isPaused(q)) {
    q.parked = req;
    return;
  }
  if (host.cache.messageCount > o.pullThresholdForAll) {
    flowControl(host, q, 'cachedMessageCountForAll', PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL);
    host.pulls.executePullRequestLater(req, PULL_TIME_DELAY_MS_WHEN_CACHE_FLOW_CONTROL);
    return;
  }
  const sd = host.subscriptionOf(q.mq.topic);
  const decision = decidePull({
    dropped: false,
    running: true,
    paused: false,
    msgCount: pq.msgCount,
    msgSize: pq.msgSize,
    maxSpan: pq.getMaxSpan(),
    hasSubscription: sd !== undefined,
    pullThresholdForQueue: o.pullThresholdForQueue,
    pullThresholdSizeForQueueMiB: o.pullThresholdSizeForQueueMiB,
    consumeConcurrentlyMaxSpan: o.consumeMaxSpan,
    pullTimeDelayMillsWhenException: o.pullTimeDelayMsWhenException,
  });
  if (decision.action === 'drop') return;
  if (decision.action === 'later') {
    if (decision.reason !== 'noSubscription') flowControl(host, q, decision.reason, decision.delayMs);
    host.pulls.executePullRequestLater(req, decision.delayMs);
    return;
  }
  if (!sd) return; // decidePull checked it; narrows the type
  if (req.nextOffset < 0) {
    try {
      req.nextOffset = await host.computePullFromWhere(q.mq);
    } catch (err) {
      host.logger.warn({ err, mq: q.mq }, 'computing the start offset failed; retrying in 3000 ms');
      host.pulls.executePullRequestLater(req, COMPUTE_PULL_FROM_WHERE_RETRY_MS);
      return;
    }
    if (q.request !== req) return;
  }
  let result: PullResult & { batch?: PulledBatch };
  try {
    const raw = await host.wrapper.pullKernelImpl({
      mq: q.mq,
      subExpression: sd.subString,
      expressionType: sd.expressionType,
      // RocketMQ: the lite pull consumer sends subVersion 0 for tag subscriptions.
      subVersion: isTagType(sd.expressionType) ? 0 : sd.subVersion,
      offset: req.nextOffset,
      maxNums: o.pullBatchSize,
      sysFlag: buildPullSysFlag(false, true, true, false, true),
      commitOffset: 0,
      brokerSuspendMaxTimeMillis: o.brokerSuspendMaxTimeMs,
      timeoutMillis: o.consumerTimeoutMsWhenSuspend,
      signal: host.signal,
    });
    // Kept raw: the messages are decoded when a poll or the iterator takes them.
    result = host.wrapper.processPullResultRaw(q.mq, raw, sd, undecodableReporter(host));
  } catch (err) {
    if (host.signal.aborted || host.pulls.isStopped || q.request !== req) return;
    const retryInMs =
      err instanceof RocketMQError && err.responseCode === ResponseCode.FLOW_CONTROL
        ? PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL
        : o.pullTimeDelayMsWhenException;
    host.logger.warn({ err, mq: q.mq }, 'pull failed');
    host.onPullError({ messageQueue: q.mq, error: err, retryInMs });
    host.pulls.executePullRequestLater(req, retryInMs);
    return;
  }
  // A seek, a removal or shutdown happened while the pull was out: its result belongs to nobody.
  if (q.request !== req || pq.dropped || !host.isRunning()) return;
  switch (result.pullStatus) {
    case PullStatus.FOUND: {
      req.nextOffset = result.nextBeginOffset;
      const batch = result.batch;
      if (batch !== undefined && batch.count > 0) {
        pq.putBatch(batch);
        host.cache.push({ queue: q, request: req, messages: [], batch });
      }
      host.pulls.startPullRequestNow(req);
      return;
    }
    case PullStatus.OFFSET_ILLEGAL:
    case PullStatus.NO_NEW_MSG:
    case PullStatus.NO_MATCHED_MSG:
      // RocketMQ's lite consumer only logs an illegal offset and goes on at the broker's next offset.
      if (result.pullStatus === PullStatus.OFFSET_ILLEGAL)
        host.logger.warn(
          { mq: q.mq, offset: req.nextOffset, nextBeginOffset: result.nextBeginOffset },
          'pull offset illegal',
        );
      req.nextOffset = result.nextBeginOffset;
      // Nothing held: messages skipped by the filter (or a moved offset) count as consumed.
      if (pq.msgCount === 0 && req.nextOffset > q.consumeOffset) q.consumeOffset = req.nextOffset;
      host.pulls.executePullRequestImmediately(req);
      return;
  }
}
