/**
 * The inside of a started PushConsumer, shared by the files that make it up (pull path, rebalance,
 * routes, periodic tasks, shutdown): the parts one start() creates, the view of the consumer they
 * read, and the two adapters start() builds — the offset store for the message model and the
 * MQConsumerInner the client instance drives.
 */
import type { Logger } from '../common/logger.js';
import type { SubscriptionData } from '../filter/index.js';
import type { ConsumeMessageConcurrentlyService } from './consume-message-concurrently-service.js';
import { MessageModel } from './consumer-constants.js';
import type { PullThresholds } from './flow-control.js';
import { LocalFileOffsetStore } from './local-file-offset-store.js';
import type { MQClientInstance } from './mq-client-instance.js';
import type { MQConsumerInner } from './mq-consumer-inner.js';
import type { OffsetPersistedEvent, OffsetStore } from './offset-store.js';
import type { PullAPIWrapper } from './pull-api-wrapper.js';
import type { PullMessageService } from './pull-message-service.js';
import type { PushConsumerEvents } from './push-consumer-events.js';
import type { ResolvedPushConsumerOptions } from './push-consumer-options.js';
import type { PushConsumerRoutes } from './push-consumer-routes.js';
import type { RebalanceImpl } from './rebalance-impl.js';
import { RemoteBrokerOffsetStore } from './remote-broker-offset-store.js';
import type { SafeEventEmitter } from './safe-emitter.js';

/** RocketMQ: QUERY_CONSUMER_OFFSET from the store uses a 5 s timeout. */
const OFFSET_QUERY_TIMEOUT_MS = 5000;

/** What one start() creates. */
export interface PushConsumerRun {
  instance: MQClientInstance;
  wrapper: PullAPIWrapper;
  offsetStore: OffsetStore;
  consume: ConsumeMessageConcurrentlyService;
  pulls: PullMessageService;
  rebalance: RebalanceImpl;
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
}

/** RocketMQ: DefaultMQPushConsumerImpl.start — a local file store when BROADCASTING, else the broker's. */
export function createOffsetStore(
  o: ResolvedPushConsumerOptions,
  instance: MQClientInstance,
  logger: Logger,
  onPersisted: (e: OffsetPersistedEvent) => void,
): OffsetStore {
  if (o.messageModel === MessageModel.BROADCASTING) {
    return new LocalFileOffsetStore(o.offsetStoreDir, instance.clientId, o.consumerGroup, logger, onPersisted);
  }
  const group = o.consumerGroup;
  return new RemoteBrokerOffsetStore(
    {
      queryConsumerOffset: async (mq) => {
        const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
        return instance.api.queryConsumerOffset(
          brokerAddr,
          { consumerGroup: group, topic: mq.topic, queueId: mq.queueId, bname: mq.brokerName },
          { timeoutMs: OFFSET_QUERY_TIMEOUT_MS },
        );
      },
      updateConsumerOffset: async (mq, offset) => {
        const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
        await instance.api.updateConsumerOffset(brokerAddr, {
          consumerGroup: group,
          topic: mq.topic,
          queueId: mq.queueId,
          commitOffset: offset,
          bname: mq.brokerName,
        });
      },
    },
    logger,
    onPersisted,
  );
}

/** The MQConsumerInner the client instance drives. */
export function createConsumerInner(host: PushConsumerHost, routes: PushConsumerRoutes): MQConsumerInner {
  const o = host.options;
  return {
    groupName: () => o.consumerGroup,
    messageModel: () => o.messageModel,
    consumeType: () => 'CONSUME_PASSIVELY',
    consumeFromWhere: () => o.consumeFromWhere,
    subscriptions: () => [...host.subscriptions.values()],
    doRebalance: async () => {
      const run = host.run();
      if (!run || !host.isRunning()) return true;
      return run.rebalance.doRebalance();
    },
    persistConsumerOffset: async () => {
      const run = host.run();
      if (!run || !host.isRunning()) return;
      await run.offsetStore.persistAll(run.rebalance.allocatedQueues());
    },
    updateTopicSubscribeInfo: (topic, mqs) => routes.updateTopicSubscribeInfo(topic, mqs),
    isSubscribeTopicNeedUpdate: (topic) => host.subscriptions.has(topic),
  };
}
