/**
 * HEART_BEAT (34) — RocketMQ: ClientManageProcessor.heartBeat. For each consumer of the HeartbeatData:
 * find (or auto-create) its subscription group — a group that does not exist and cannot be created is
 * skipped, as in RocketMQ —, create `%RETRY%<group>` with the group's retryQueueNums queues (perm RW),
 * and register the consumer (its SQL92 subscriptions reach the ConsumerFilterManager from there). Each
 * producer group is registered too. SUCCESS, except that a client that would make a group larger than the
 * broker's maxConsumersPerGroup is refused with SYSTEM_ERROR naming that option (nothing of its heartbeat
 * is registered then).
 */
import { retryTopic } from '../../common/message.js';
import { PermName, ResponseCode, type HeartbeatData } from '../../protocol/index.js';
import type { BrokerSubscriptionData, Processor } from '../broker-context.js';
import { ok } from './responses.js';

/** RocketMQ: TopicSysFlag.buildSysFlag(false, true) — the group consumes in unit mode. */
const FLAG_UNIT_SUB = 0x2;

export const heartBeat: Processor = async (ctx, request, connection) => {
  const data = request.parsedBody as HeartbeatData;
  const maxMembers = ctx.brokerConfig.maxConsumersPerGroup;
  for (const consumer of data.consumerDataSet) {
    const members = ctx.consumerManager.getConsumerGroupInfo(consumer.groupName)?.getChannels();
    if (members && members.length >= maxMembers && !members.some((m) => m.clientId === data.clientID)) {
      return {
        code: ResponseCode.SYSTEM_ERROR,
        header: {},
        remark: `consumer group ${consumer.groupName} already has ${members.length} members (maxConsumersPerGroup ${maxMembers})`,
      };
    }
  }
  for (const consumer of data.consumerDataSet) {
    const group = consumer.groupName;
    const config = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(group);
    if (!config) continue;
    // RocketMQ creates the retry topic even with 0 queues; a topic without queues serves nothing, so not here.
    if (config.retryQueueNums > 0) {
      ctx.topicConfigManager.createTopicIfAbsent(
        retryTopic(group),
        config.retryQueueNums,
        PermName.READ | PermName.WRITE,
        consumer.unitMode ? FLAG_UNIT_SUB : 0,
      );
    }
    const subscriptions: BrokerSubscriptionData[] = consumer.subscriptionDataSet.map((s) => ({
      topic: s.topic,
      subString: s.subString,
      tagsSet: [...s.tagsSet],
      codeSet: [...s.codeSet],
      subVersion: s.subVersion,
      expressionType: s.expressionType,
      classFilterMode: s.classFilterMode,
    }));
    const changed = ctx.consumerManager.registerConsumer(
      group,
      {
        clientId: data.clientID,
        remoteAddress: connection.remoteAddress,
        consumeType: consumer.consumeType,
        messageModel: consumer.messageModel,
        consumeFromWhere: consumer.consumeFromWhere,
        subscriptions,
        // RocketMQ: a V2 heartbeat (non-zero fingerprint) may leave the subscriptions out.
        withoutSub: data.withoutSub === true && (data.heartbeatFingerprint ?? 0) !== 0,
      },
      config.notifyConsumerIdsChangedEnable,
    );
    if (changed) ctx.logger.info({ group, clientId: data.clientID }, 'registerConsumer info changed');
  }
  for (const producer of data.producerDataSet) {
    ctx.consumerManager.producerManager.registerProducer(producer.groupName, data.clientID);
  }
  return ok();
};
