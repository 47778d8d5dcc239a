/**
 * The broker's stats as RocketMQ's AdminBrokerProcessor answers them from its BrokerStatsManager:
 * - VIEW_BROKER_STATS_DATA (315): BrokerStatsData, an item's sum, tps and average per call over the last
 *   minute, hour and day; SYSTEM_ERROR `The stats <name> <key> not exist` for an item never counted
 *   (statsAll reads TOPIC_PUT_NUMS by topic and GROUP_GET_NUMS by `topic@group`).
 * - GET_BROKER_CONSUME_STATS (317): ConsumeStatsList, for every subscription group the ConsumeStats of
 *   each topic it has offsets on (write queues; with `isOrder` only ordered topics), the broker's address
 *   and the total lag.
 */
import {
  FastJsonMap,
  ResponseCode,
  toFastJson,
  type GetBrokerConsumeStatsRequestHeader,
  type OffsetWrapper,
  type ViewBrokerStatsDataRequestHeader,
} from '../../protocol/index.js';
import type { MessageQueue } from '../../common/message.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const viewBrokerStatsData: Processor = (ctx, request) => {
  const h = request.header as ViewBrokerStatsDataRequestHeader;
  const item = ctx.ops.stats.getStatsItem(h.statsName, h.statsKey);
  if (!item)
    return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, `The stats <${h.statsName}> <${h.statsKey}> not exist`));
  const body = toFastJson({
    statsDay: item.window('day'),
    statsHour: item.window('hour'),
    statsMinute: item.window('minute'),
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(body, 'utf8')));
};

export const getBrokerConsumeStats: Processor = async (ctx, request) => {
  const { isOrder } = request.header as GetBrokerConsumeStatsRequestHeader;
  const consumeStatsList: Array<Record<string, unknown[]>> = [];
  let totalDiff = 0;
  for (const { groupName: group } of ctx.subscriptionGroupManager.allSubscriptionGroups()) {
    const online = ctx.consumerManager.getConsumerGroupInfo(group);
    const perTopic: unknown[] = [];
    for (const topic of ctx.consumerOffsetManager.whichTopicByConsumer(group).sort()) {
      const cfg = ctx.topicConfigManager.selectTopicConfig(topic);
      if (!cfg || (isOrder && !cfg.order)) continue;
      if (online && online.getSubscriptions().length > 0 && !online.findSubscriptionData(topic)) continue;
      const table = new FastJsonMap<MessageQueue, OffsetWrapper>();
      for (let queueId = 0; queueId < cfg.writeQueueNums; queueId++) {
        const brokerOffset = Math.max(0, ctx.store.getMaxOffsetInQueue(topic, queueId));
        const consumerOffset = Math.max(0, ctx.consumerOffsetManager.queryOffset(group, topic, queueId));
        const last =
          consumerOffset > 0 ? await ctx.store.getMessageStoreTimeStamp(topic, queueId, consumerOffset - 1) : 0;
        totalDiff += brokerOffset - consumerOffset;
        table.entries.push([
          { brokerName: ctx.brokerName, queueId, topic },
          { brokerOffset, consumerOffset, lastTimestamp: Math.max(0, last) },
        ]);
      }
      perTopic.push({ consumeTps: ctx.ops.stats.tpsGroupGetNums(group, topic), offsetTable: table });
    }
    consumeStatsList.push({ [group]: perTopic });
  }
  const body = toFastJson({
    brokerAddr: ctx.ops.config.get('brokerIP1') + ':' + ctx.ops.config.get('listenPort'),
    consumeStatsList,
    totalDiff,
  });
  return ok({}, undefined, Buffer.from(body, 'utf8'));
};
