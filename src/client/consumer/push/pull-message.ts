/**
 * The push consumer's pull path (RocketMQ: DefaultMQPushConsumerImpl.pullMessage and its PullCallback):
 * the pre-pull checks (`decidePull`), one pull through PullAPIWrapper carrying the
 * commit offset, then, per pull status, what happens to the PullRequest and its ProcessQueue. Every
 * path hands the same request back to the PullMessageService exactly once, or lets it die with its
 * dropped queue.
 */
import { onAbort } from '../../../common/abort.js';
import { RocketMQError } from '../../../common/errors.js';
import type { MessageQueue } from '../../../common/message.js';
import { buildPullSysFlag } from '../../../protocol/pull-sys-flag.js';
import { ResponseCode } from '../../../protocol/response-code.js';
import { MessageModel } from '../consumer-constants.js';
import { decidePull, PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL } from '../flow-control.js';
import { undecodableReporter, type PulledBatch, type UndecodableMessage } from '../pulled-batch.js';
import type { PullRequest } from '../pull-request.js';
import { PullStatus, type PullResult } from '../pull-result.js';
import type { PushConsumerHost, PushConsumerRun } from './push-consumer-run.js';

/** RocketMQ: after OFFSET_ILLEGAL the queue is re-created from the broker's offset 10 s later. */
export const OFFSET_ILLEGAL_REPAIR_DELAY_MS = 10_000;

/** RocketMQ: DefaultMQPushConsumerImpl.pullMessage — the checks, then one pull and its callback. */
export async function pullMessage(host: PushConsumerHost, run: PushConsumerRun, req: PullRequest): Promise<void> {
  const pq = req.processQueue;
  const mq = req.messageQueue;
  const o = host.options;
  if (pq.dropped) return;
  pq.lastPullTimestamp = o.clock.now();
  const sd = host.subscriptions.get(mq.topic);
  const decision = decidePull({
    dropped: pq.dropped,
    running: host.isRunning(),
    paused: host.isPaused(),
    msgCount: pq.msgCount,
    msgSize: pq.msgSize,
    maxSpan: pq.getMaxSpan(),
    hasSubscription: sd !== undefined,
    pullThresholdForQueue: host.thresholds.pullThresholdForQueue,
    pullThresholdSizeForQueueMiB: host.thresholds.pullThresholdSizeForQueueMiB,
    consumeConcurrentlyMaxSpan: o.consumeConcurrentlyMaxSpan,
    orderlyLocked: host.isOrderly()
      ? o.messageModel === MessageModel.BROADCASTING ||
        (pq.locked && !pq.isLockExpired(o.clock.now(), o.rebalanceLockMaxLiveTimeMs))
      : undefined,
    pullTimeDelayMillsWhenException: o.pullTimeDelayMsWhenException,
  });
  if (decision.action === 'drop') return;
  if (decision.action === 'later') {
    if (
      decision.reason === 'cachedMessageCount' ||
      decision.reason === 'cachedMessageSize' ||
      decision.reason === 'consumeSpan'
    ) {
      // RocketMQ logs one in 1000 flow-control events; the event follows the same rhythm.
      if (host.flowControlTimes++ % 1000 === 0) {
        host.events.emit('flowControl', {
          messageQueue: mq,
          reason: decision.reason,
          msgCount: pq.msgCount,
          msgSize: pq.msgSize,
          maxSpan: pq.getMaxSpan(),
          delayMs: decision.delayMs,
        });
      }
    }
    run.pulls.executePullRequestLater(req, decision.delayMs);
    return;
  }
  if (!sd) return; // decidePull checked it; narrows the type
  const clustering = o.messageModel === MessageModel.CLUSTERING;
  const commitOffsetValue = clustering ? run.offsetStore.readOffsetFromMemory(mq) : 0;
  const postSub = o.postSubscriptionWhenPull && !sd.classFilterMode;
  const sysFlag = buildPullSysFlag(clustering && commitOffsetValue > 0, true, postSub, sd.classFilterMode);
  let result: PullResult;
  // The pull carries the queue's own controller (aborted by settlePull), tied to the topic's signal for
  // the time of this pull only. AbortSignal.any would make a combined signal per pull, and Node keeps
  // every signal combined from a long-lived one for as long as that one lives.
  let abort = pq.pullAbort;
  if (abort === undefined || abort.signal.aborted) pq.pullAbort = abort = new AbortController();
  const controller = abort;
  const topicSignal = host.topicPullSignal(mq.topic);
  const unlink = onAbort(topicSignal, () => controller.abort(topicSignal.reason));
  try {
    const call = run.wrapper.pullKernelImpl({
      mq,
      subExpression: sd.subString,
      expressionType: sd.expressionType,
      subVersion: sd.subVersion,
      offset: req.nextOffset,
      maxNums: o.pullBatchSize,
      sysFlag,
      commitOffset: Math.max(commitOffsetValue, 0),
      brokerSuspendMaxTimeMillis: o.brokerSuspendMaxTimeMs,
      timeoutMillis: o.consumerTimeoutMsWhenSuspend,
      signal: controller.signal,
    });
    const inFlight = { abort: controller, call };
    pq.pullInFlight = inFlight;
    let raw;
    try {
      raw = await call;
    } finally {
      if (pq.pullInFlight === inFlight) pq.pullInFlight = undefined;
      unlink();
    }
    if (host.subscriptions.get(mq.topic) !== sd) return pullAgainWithNewSubscription(run, req);
    const undecodable = undecodableReporter(host, emitUndecodable);
    if (run.consume.submitBatch !== undefined) {
      // Kept raw: each message is decoded when the consume service hands it out.
      result = run.wrapper.processPullResultRaw(mq, raw, sd, undecodable);
    } else {
      const processed = run.wrapper.processPullResult(mq, raw, sd);
      for (const u of processed.undecodable ?? []) undecodable(u, mq);
      result = processed;
    }
  } catch (err) {
    unlink();
    if (host.pullSignal.aborted || run.pulls.isStopped || pq.dropped) return;
    if (host.subscriptions.get(mq.topic) !== sd) return pullAgainWithNewSubscription(run, req);
    const retryInMs =
      err instanceof RocketMQError && err.responseCode === ResponseCode.FLOW_CONTROL
        ? PULL_TIME_DELAY_MS_WHEN_BROKER_FLOW_CONTROL
        : o.pullTimeDelayMsWhenException;
    if (!mq.topic.startsWith('%RETRY%')) host.logger.warn({ err, mq }, 'pull failed');
    host.events.emit('pullError', { messageQueue: mq, error: err, retryInMs });
    run.pulls.executePullRequestLater(req, retryInMs);
    return;
  }
  onPullResult(host, run, req, result);
}

/** The push consumer's `undecodableMessage` event, after the warning (see undecodableReporter). */
function emitUndecodable(host: PushConsumerHost, u: UndecodableMessage, mq: MessageQueue): void {
  host.events.emit('undecodableMessage', { messageQueue: mq, message: u.message, error: u.error });
}

/**
 * The topic's subscription changed while this pull was out: the broker may have filtered it with
 * either one, so its answer is dropped unread and the queue is pulled again from the same offset with
 * the new subscription. Nothing the new subscription matches is skipped, and nothing is re-checked
 * against a subscription the broker did not use.
 */
function pullAgainWithNewSubscription(run: PushConsumerRun, req: PullRequest): void {
  if (!req.processQueue.dropped) run.pulls.executePullRequestImmediately(req);
}

/** RocketMQ: the PullCallback's onSuccess, per status. */
function onPullResult(
  host: PushConsumerHost,
  run: PushConsumerRun,
  req: PullRequest,
  result: PullResult & { batch?: PulledBatch },
): void {
  const pq = req.processQueue;
  const mq = req.messageQueue;
  switch (result.pullStatus) {
    case PullStatus.FOUND: {
      const prevRequestOffset = req.nextOffset;
      req.nextOffset = result.nextBeginOffset;
      const list = result.msgFoundList;
      const batch = result.batch;
      const first = batch ? (batch.count > 0 ? batch.offsetAt(0) : undefined) : list[0]?.queueOffset;
      if (result.nextBeginOffset < prevRequestOffset || (first !== undefined && first < prevRequestOffset))
        host.logger.warn(
          { mq, prevRequestOffset, nextBeginOffset: result.nextBeginOffset },
          '[BUG] pull result offset went backwards',
        );
      if (first === undefined) {
        // Everything was filtered out on the client (tag re-check): pull again at once.
        run.pulls.executePullRequestImmediately(req);
        return;
      }
      if (batch) pq.putBatch(batch);
      else pq.putMessage(list);
      // The next pull goes out before the listener runs, so the broker serves it while this batch is
      // consumed (RocketMQ hands the batch to the consume pool and re-queues the request at once).
      if (host.options.pullIntervalMs > 0) run.pulls.executePullRequestLater(req, host.options.pullIntervalMs);
      else run.pulls.startPullRequestNow(req);
      if (batch) run.consume.submitBatch?.(batch, pq, mq);
      else run.consume.submitConsumeRequest(list, pq, mq);
      return;
    }
    case PullStatus.NO_NEW_MSG:
    case PullStatus.NO_MATCHED_MSG:
      req.nextOffset = result.nextBeginOffset;
      // RocketMQ: correctTagsOffset — with nothing in flight the committed offset may move past the gap.
      if (pq.msgCount === 0) run.offsetStore.updateOffset(mq, req.nextOffset, true);
      run.pulls.executePullRequestImmediately(req);
      return;
    case PullStatus.OFFSET_ILLEGAL: {
      host.logger.warn({ mq, offset: req.nextOffset, nextBeginOffset: result.nextBeginOffset }, 'pull offset illegal');
      req.nextOffset = result.nextBeginOffset;
      pq.dropped = true;
      run.pulls.executeTaskLater(() => {
        void (async () => {
          try {
            run.offsetStore.updateAndFreezeOffset(mq, req.nextOffset);
            await run.offsetStore.persist(mq);
            await run.rebalance.removeProcessQueue(mq);
            run.instance.rebalanceImmediately();
          } catch (err) {
            host.logger.warn({ err, mq }, 'repairing an illegal offset failed');
          }
        })();
      }, OFFSET_ILLEGAL_REPAIR_DELAY_MS);
      return;
    }
  }
}
