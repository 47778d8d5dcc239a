/**
 * The inside of a started PushConsumer, shared by the files that make it up (pull path, rebalance,
 * routes, periodic tasks, shutdown): the parts one start() creates, the view of the consumer they
 * read, and the MQConsumerInner start() builds for the client instance to drive (the offset store
 * it makes comes from ../offset-store-factory.ts, shared with the lite pull consumer).
 */
import type { ConsumerTelemetry } from '../../telemetry/index.js';
import type { Logger } from '../../../common/logger.js';
import type { MessageExt, MessageQueue } from '../../../common/message.js';
import type { SubscriptionData } from '../../../filter/index.js';
import { MessageConst, messageQueueKey, retryTopic } from '../../../common/message.js';
import {
  ConsumeOrderlyStatus,
  type ConsumeMessageOrderlyService,
  type MessageListenerOrderly,
} from './consume-message-orderly-service.js';
import type {
  ConsumeConcurrentlyContext,
  MessageListenerConcurrently,
} from './consume-message-concurrently-service.js';
import { ConsumeConcurrentlyStatus } from '../consumer-constants.js';
import type { ConsumerStartup } from '../consumer-startup.js';
import {
  RunningInfoProperty,
  type CMResult,
  type ConsumeMessageDirectlyResult,
  type ConsumerRunningInfo,
} from '../../instance/consumer-running-info.js';
import type { PullThresholds } from '../flow-control.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';
import type { MQConsumerInner } from '../../instance/mq-consumer-inner.js';
import type { OffsetStore } from '../offset-store.js';
import type { PullAPIWrapper } from '../pull-api-wrapper.js';
import type { PullMessageService } from '../pull-message-service.js';
import type { PushConsumerEvents } from './push-consumer-events.js';
import type { ResolvedPushConsumerOptions } from './push-consumer-options.js';
import type { ConsumerRoutes } from '../consumer-routes.js';
import type { ProcessQueue } from '../process-queue.js';
import type { PulledBatch } from '../pulled-batch.js';
import type { QueueLocker } from './queue-locker.js';
import type { RebalanceImpl } from '../rebalance-impl.js';
import type { SafeEventEmitter } from '../../instance/safe-emitter.js';
import type { MsgTrace } from '../../trace/trace-hooks.js';

/** What both consume services offer the pull path and shutdown. */
export interface ConsumeMessageService {
  submitConsumeRequest(msgs: readonly MessageExt[], pq: ProcessQueue, mq: MessageQueue): void;
  /**
   * A service that decodes messages when it hands them out takes pull answers raw (already put into
   * `pq` with `putBatch`); without it the pull path decodes them first.
   */
  submitBatch?(batch: PulledBatch, pq: ProcessQueue, mq: MessageQueue): void;
  /** Stops taking work and waits for running listeners until `deadline` (clock ms). */
  shutdown(deadline: number): Promise<{ unfinished: number; droppedRequests: number }>;
}

/** What one start() creates. */
export interface PushConsumerRun {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  consume: ConsumeMessageService;
  /** Orderly consumption: the service (also in `consume`) and, in CLUSTERING, the broker locks. */
  orderly?: { service: ConsumeMessageOrderlyService; locker: QueueLocker | undefined } | undefined;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
  /** The settle and the `ready` signal; set once `start()` has reached the brokers. */
  startup?: ConsumerStartup | undefined;
  /** The message trace, when `enableMsgTrace` is on. */
  trace?: MsgTrace | undefined;
}

/** The consumer as its parts see it; the functions read its state at the time of the call. */
export interface PushConsumerHost {
  readonly options: ResolvedPushConsumerOptions;
  readonly logger: Logger;
  readonly events: SafeEventEmitter<PushConsumerEvents>;
  /** Topic → subscription (the retry topic included once started in CLUSTERING). */
  readonly subscriptions: ReadonlyMap<string, SubscriptionData>;
  /** Aborted at shutdown: held pulls end at once. */
  readonly pullSignal: AbortSignal;
  /**
   * The signal of the pulls of `topic`: aborted at shutdown, and when the topic's subscription changes
   * (its held pulls then come back at once and are sent again with the new subscription).
   */
  topicPullSignal(topic: string): AbortSignal;
  /** The per-queue pull limits, recomputed at each rebalance. */
  readonly thresholds: PullThresholds;
  /** Cache flow-control hits so far (RocketMQ reports one in 1000). */
  flowControlTimes: number;
  /** The started parts; undefined before start() and after a failed start. */
  run(): PushConsumerRun | undefined;
  isRunning(): boolean;
  isPaused(): boolean;
  /** An orderly listener was registered. */
  isOrderly(): boolean;
  /** OpenTelemetry spans and metrics of the consumption. */
  readonly telemetry: ConsumerTelemetry;
}

/** The MQConsumerInner the client instance drives. */
/** The registered listener, as CONSUME_MESSAGE_DIRECTLY runs it. */
export type RegisteredListener =
  { orderly: false; fn: MessageListenerConcurrently } | { orderly: true; fn: MessageListenerOrderly };

export function createConsumerInner(
  host: PushConsumerHost,
  routes: ConsumerRoutes,
  listener: RegisteredListener,
): MQConsumerInner {
  const o = host.options;
  const startedAt = o.clock.now();
  return {
    groupName: () => o.consumerGroup,
    messageModel: () => o.messageModel,
    consumeType: () => 'CONSUME_PASSIVELY',
    consumeFromWhere: () => o.consumeFromWhere,
    subscriptions: () => [...host.subscriptions.values()],
    doRebalance: async () => {
      const run = host.run();
      if (!run || !host.isRunning()) return true;
      // Members starting together divide the queues only once the membership is quiet.
      if (run.startup) await run.startup.settled;
      if (!host.isRunning()) return true;
      const balanced = await run.rebalance.doRebalance();
      run.startup?.afterPass(balanced, run.rebalance.processQueueTable.values());
      return balanced;
    },
    persistConsumerOffset: async () => {
      const run = host.run();
      if (!run || !host.isRunning()) return;
      await run.offsetStore.persistAll(run.rebalance.allocatedQueues());
    },
    updateTopicSubscribeInfo: (topic, mqs) => routes.updateTopicSubscribeInfo(topic, mqs),
    isSubscribeTopicNeedUpdate: (topic) => host.subscriptions.has(topic),
    runningInfo: () => pushRunningInfo(host, startedAt),
    consumeMessageDirectly: (msg, brokerName) => consumeMessageDirectly(host, listener, msg, brokerName),
    resetOffset: (topic, offsetTable) => resetPushOffsets(host, topic, offsetTable),
    connectionError: (e) => void host.events.emit('connectionError', e),
  };
}

/**
 * RESET_CONSUMER_CLIENT_OFFSET for a running PushConsumer (RocketMQ: MQClientInstance.resetOffset): the
 * held queues among the broker's table stop (dropped: what they cached and what their listeners are
 * still running is not committed), their offset is set to the new one and frozen there, and they are
 * given up (the offset written, then forgotten); the rebalance that follows takes them again from the
 * committed offset, which the broker has already moved. RocketMQ sleeps a fixed time between the drop
 * and the offset update; here a queue is given up at once (an orderly one once its running batch has
 * ended, as a rebalance gives it up), so the reset takes effect as soon as the queue is free.
 */
async function resetPushOffsets(
  host: PushConsumerHost,
  topic: string,
  offsetTable: ReadonlyArray<readonly [MessageQueue, number]>,
): Promise<void> {
  const run = host.run();
  if (!run || !host.isRunning()) return;
  const wanted = new Map(offsetTable.map(([mq, offset]) => [messageQueueKey(mq), offset]));
  const held: Array<{ mq: MessageQueue; offset: number }> = [];
  for (const [key, e] of run.rebalance.processQueueTable) {
    const offset = wanted.get(key);
    if (e.mq.topic !== topic || offset === undefined) continue;
    e.pq.dropped = true;
    // Frozen: a listener finishing on the dropped queue must not move it back.
    run.offsetStore.updateAndFreezeOffset(e.mq, offset);
    held.push({ mq: e.mq, offset });
  }
  if (held.length === 0) return;
  host.logger.info({ topic, queues: held }, 'offsets reset by the broker: queues dropped and taken again');
  await Promise.all(held.map(({ mq }) => run.rebalance.removeProcessQueue(mq)));
  if (host.isRunning()) run.instance.rebalanceImmediately();
}

/** RocketMQ: DefaultMQPushConsumerImpl.consumerRunningInfo — settings, subscriptions and every held queue. */
function pushRunningInfo(host: PushConsumerHost, startedAt: number): ConsumerRunningInfo {
  const o = host.options;
  const run = host.run();
  const properties: Record<string, string> = {
    consumerGroup: o.consumerGroup,
    messageModel: o.messageModel,
    consumeFromWhere: o.consumeFromWhere,
    consumeThreadMax: String(o.consumeThreadMax),
    consumeMessageBatchMaxSize: String(o.consumeMessageBatchMaxSize),
    pullBatchSize: String(o.pullBatchSize),
    instanceName: o.instanceName,
    clientIP: o.clientIP,
    [RunningInfoProperty.CONSUME_ORDERLY]: String(host.isOrderly()),
    [RunningInfoProperty.THREADPOOL_CORE_SIZE]: String(o.consumeThreadMax),
    [RunningInfoProperty.CONSUME_TYPE]: 'CONSUME_PASSIVELY',
    [RunningInfoProperty.CLIENT_VERSION]: 'rocketmq-ts',
    [RunningInfoProperty.CONSUMER_START_TIMESTAMP]: String(startedAt),
  };
  if (o.namesrvAddr.length > 0) properties[RunningInfoProperty.NAMESERVER_ADDR] = o.namesrvAddr.join(';');
  const mqTable: ConsumerRunningInfo['mqTable'] = [];
  if (run) {
    for (const { mq, pq } of run.rebalance.processQueueTable.values()) {
      mqTable.push([
        mq,
        {
          commitOffset: run.offsetStore.readOffsetFromMemory(mq),
          cachedMsgMinOffset: pq.firstKey() ?? 0,
          cachedMsgMaxOffset: pq.lastKey() ?? 0,
          cachedMsgCount: pq.msgCount,
          cachedMsgSizeInMiB: Math.floor(pq.msgSize / (1024 * 1024)),
          transactionMsgMinOffset: 0,
          transactionMsgMaxOffset: 0,
          transactionMsgCount: 0,
          locked: pq.locked,
          tryUnlockTimes: 0,
          lastLockTimestamp: pq.lastLockTimestamp,
          droped: pq.dropped,
          lastPullTimestamp: pq.lastPullTimestamp,
          lastConsumeTimestamp: pq.lastConsumeTimestamp,
        },
      ]);
    }
  }
  return { properties, subscriptionSet: [...host.subscriptions.values()], mqTable };
}

/**
 * RocketMQ: ConsumeMessageConcurrentlyService / ConsumeMessageOrderlyService.consumeMessageDirectly —
 * the listener runs on one message outside any queue; nothing is committed or sent back, the result is
 * only reported. A listener that resolves with nothing has succeeded.
 */
async function consumeMessageDirectly(
  host: PushConsumerHost,
  listener: RegisteredListener,
  msg: MessageExt,
  brokerName: string | undefined,
): Promise<ConsumeMessageDirectlyResult> {
  const { clock, consumerGroup } = host.options;
  const props = (msg.properties ??= {});
  const realTopic = props[MessageConst.RETRY_TOPIC];
  if (realTopic !== undefined && msg.topic === retryTopic(consumerGroup)) msg.topic = realTopic;
  const begin = clock.now();
  props[MessageConst.CONSUME_START_TIME] = String(begin);
  const messageQueue = { topic: msg.topic, brokerName: brokerName ?? '', queueId: msg.queueId };
  let consumeResult: CMResult;
  let remark: string | undefined;
  try {
    if (listener.orderly) {
      const status = await listener.fn([msg], { messageQueue, autoCommit: true, suspendCurrentQueueTimeMillis: -1 });
      consumeResult =
        status === undefined || status === ConsumeOrderlyStatus.SUCCESS
          ? 'CR_SUCCESS'
          : status === ConsumeOrderlyStatus.SUSPEND_CURRENT_QUEUE_A_MOMENT
            ? 'CR_LATER'
            : status === ConsumeOrderlyStatus.COMMIT
              ? 'CR_COMMIT'
              : 'CR_ROLLBACK';
    } else {
      const context: ConsumeConcurrentlyContext = { messageQueue, delayLevelWhenNextConsume: 0, ackIndex: 2147483647 };
      const status = await listener.fn([msg], context);
      consumeResult =
        status === undefined || status === ConsumeConcurrentlyStatus.CONSUME_SUCCESS
          ? 'CR_SUCCESS'
          : status === ConsumeConcurrentlyStatus.RECONSUME_LATER
            ? 'CR_LATER'
            : 'CR_RETURN_NULL';
    }
  } catch (err) {
    consumeResult = 'CR_THROW_EXCEPTION';
    remark = err instanceof Error ? (err.stack ?? err.message) : String(err);
  }
  return { order: listener.orderly, autoCommit: true, consumeResult, remark, spentTimeMills: clock.now() - begin };
}
