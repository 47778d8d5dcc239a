/**
 * GET_TOPIC_STATS_INFO (202): per write queue of a topic its min offset, max offset and the store time
 * of its last message (0 when empty), as RocketMQ's TopicStatsTable in fastjson's form (MessageQueue
 * keys written as objects), and RocketMQ 5's `topicPutTps` (messages put per second over the last minute).
 * TOPIC_NOT_EXIST `topic[<t>] not exist` for an unknown topic.
 */
import {
  FastJsonMap,
  ResponseCode,
  toFastJson,
  type GetTopicStatsInfoRequestHeader,
  type TopicOffset,
} from '../../protocol/index.js';
import type { MessageQueue } from '../../common/message.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getTopicStatsInfo: Processor = async (ctx, request) => {
  const { topic } = request.header as GetTopicStatsInfoRequestHeader;
  const cfg = ctx.topicConfigManager.selectTopicConfig(topic);
  if (!cfg) return fail(ResponseCode.TOPIC_NOT_EXIST, `topic[${topic}] not exist`);
  const table = new FastJsonMap<MessageQueue, TopicOffset>();
  for (let queueId = 0; queueId < cfg.writeQueueNums; queueId++) {
    const minOffset = Math.max(0, ctx.store.getMinOffsetInQueue(topic, queueId));
    const maxOffset = Math.max(0, ctx.store.getMaxOffsetInQueue(topic, queueId));
    const last = maxOffset > 0 ? await ctx.store.getMessageStoreTimeStamp(topic, queueId, maxOffset - 1) : 0;
    table.entries.push([
      { brokerName: ctx.brokerName, queueId, topic },
      { lastUpdateTimestamp: Math.max(0, last), maxOffset, minOffset },
    ]);
  }
  const body = toFastJson({ offsetTable: table, topicPutTps: ctx.ops.stats.tpsTopicPutNums(topic) });
  return ok({}, undefined, Buffer.from(body, 'utf8'));
};
