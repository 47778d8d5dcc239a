/**
 * The offset store a consumer's message model asks for (RocketMQ: DefaultMQPushConsumerImpl.start and
 * DefaultLitePullConsumerImpl.start make the same choice): a local file store when BROADCASTING, since
 * each member consumes every queue, else the broker's store, which the group shares.
 */
import type { Logger } from '../../common/logger.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import { MessageModel } from './consumer-constants.js';
import { LocalFileOffsetStore } from './local-file-offset-store.js';
import type { OffsetPersistedEvent, OffsetStore } from './offset-store.js';
import { RemoteBrokerOffsetStore } from './remote-broker-offset-store.js';

/** RocketMQ: QUERY_CONSUMER_OFFSET from the store uses a 5 s timeout. */
const OFFSET_QUERY_TIMEOUT_MS = 5000;

/** The consumer options the choice reads (the push and the lite pull consumer's resolved options fit). */
export interface OffsetStoreOptions {
  readonly consumerGroup: string;
  readonly messageModel: MessageModel;
  /** Where a BROADCASTING consumer keeps its offsets file. */
  readonly offsetStoreDir: string;
}

export function createOffsetStore(
  o: OffsetStoreOptions,
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
      updateConsumerOffset: async (mq, offset, oneway) => {
        const { brokerAddr } = await instance.findBrokerAddressForQueue(mq);
        const header = {
          consumerGroup: group,
          topic: mq.topic,
          queueId: mq.queueId,
          commitOffset: offset,
          bname: mq.brokerName,
        };
        if (oneway) await instance.api.updateConsumerOffsetOneway(brokerAddr, header);
        else await instance.api.updateConsumerOffset(brokerAddr, header);
      },
    },
    logger,
    onPersisted,
  );
}
