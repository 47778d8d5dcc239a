/**
 * UPDATE_CONSUMER_OFFSET (15): RocketMQ's ConsumerManageProcessor.updateConsumerOffset.
 * Checks in order: the group exists, or is created as a pull would create it (RocketMQ 4.9.8 commits for
 * any group, which mqadmin cloneGroupOffset to a new group relies on; a group the broker may not
 * auto-create is refused); the topic exists; then a plain overwrite of the committed offset.
 */
import { ResponseCode, type UpdateConsumerOffsetRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const updateConsumerOffset: Processor = (ctx, request, connection) => {
  const h = request.header as UpdateConsumerOffsetRequestHeader;
  if (!ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.consumerGroup)) {
    return Promise.resolve(fail(ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST, `Group ${h.consumerGroup} not exist!`));
  }
  const topic = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!topic) {
    return Promise.resolve(fail(ResponseCode.TOPIC_NOT_EXIST, `Topic ${h.topic} not exist!`));
  }
  // Ours: a queue id past the topic's queues is refused too, so the offset table cannot be grown without bound.
  if (h.queueId < 0 || h.queueId >= Math.max(topic.readQueueNums, topic.writeQueueNums)) {
    return Promise.resolve(fail(ResponseCode.INVALID_PARAMETER, `QueueId is illegal, topic is ${h.topic}`));
  }
  ctx.consumerOffsetManager.commitOffset(connection.remoteAddress, h.consumerGroup, h.topic, h.queueId, h.commitOffset);
  return Promise.resolve(ok());
};
