/**
 * GET_CONSUME_STATS (208): a group's progress per queue, as RocketMQ's AdminBrokerProcessor.getConsumeStats:
 * for the named topic, or for every topic the group has committed offsets on, per read queue the queue's
 * max offset (`brokerOffset`), the committed offset (`consumerOffset`, 0 when none) read from the
 * broker's table in memory — never the periodically written file — and the store time of the last
 * consumed message (`lastTimestamp`, 0 when none); RocketMQ 5's `pullOffset` (the next offset handed to the
 * group, never below the committed one); `consumeTps` over the last minute. An unknown topic,
 * or one an online group does not subscribe to, is left out, as RocketMQ does.
 */
import {
  FastJsonMap,
  toFastJson,
  type GetConsumeStatsRequestHeader,
  type OffsetWrapper,
} from '../../protocol/index.js';
import type { MessageQueue } from '../../common/message.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getConsumeStats: Processor = async (ctx, request) => {
  const h = request.header as GetConsumeStatsRequestHeader;
  const group = h.consumerGroup;
  const topics =
    h.topic === undefined || h.topic.trim() === ''
      ? ctx.consumerOffsetManager.whichTopicByConsumer(group).sort()
      : [h.topic];
  const groupInfo = ctx.consumerManager.getConsumerGroupInfo(group);
  const table = new FastJsonMap<MessageQueue, OffsetWrapper>();
  for (const topic of topics) {
    const cfg = ctx.topicConfigManager.selectTopicConfig(topic);
    if (!cfg) {
      ctx.logger.warn({ group, topic }, 'consumeStats: the topic config does not exist');
      continue;
    }
    // RocketMQ: an online group that does not subscribe to the topic has no progress on it.
    if (groupInfo && !groupInfo.findSubscriptionData(topic) && groupInfo.getSubscriptions().length > 0) continue;
    for (let queueId = 0; queueId < cfg.readQueueNums; queueId++) {
      const brokerOffset = Math.max(0, ctx.store.getMaxOffsetInQueue(topic, queueId));
      const consumerOffset = Math.max(0, ctx.consumerOffsetManager.queryOffset(group, topic, queueId));
      const pullOffset = Math.max(consumerOffset, ctx.consumerOffsetManager.queryPullOffset(group, topic, queueId));
      const lastTimestamp =
        consumerOffset > 0 ? await ctx.store.getMessageStoreTimeStamp(topic, queueId, consumerOffset - 1) : 0;
      table.entries.push([
        { brokerName: ctx.brokerName, queueId, topic },
        { brokerOffset, consumerOffset, pullOffset, lastTimestamp: Math.max(0, lastTimestamp) },
      ]);
    }
  }
  const body = toFastJson({ consumeTps: ctx.consumerOffsetManager.consumeTps(group), offsetTable: table });
  return ok({}, undefined, Buffer.from(body, 'utf8'));
};
