/**
 * The TopicList answers of RocketMQ's NameServer (RouteInfoManager) and AdminBrokerProcessor, for this
 * broker, which is its own NameServer. Each body is TopicList `{"topicList":[...]}`, sorted.
 * - GET_TOPICS_BY_CLUSTER (224) `cluster`: every topic of the broker when it is in that cluster, none
 *   for another cluster (RocketMQ answers an unknown cluster with an empty list too).
 * - GET_SYSTEM_TOPIC_LIST_FROM_NS (304): the cluster's and the broker's names (the topics a broker
 *   registers under them), with `brokerAddr` naming the broker, whose own list the client asks next.
 * - GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305): TopicValidator's system topics, the cluster and broker names
 *   and the broker's other system topics (`rmq_sys_` ones).
 * - GET_UNIT_TOPIC_LIST (311), GET_HAS_UNIT_SUB_TOPIC_LIST (312), GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313):
 *   the topics whose topicSysFlag has FLAG_UNIT (1), FLAG_UNIT_SUB (2), or FLAG_UNIT_SUB without FLAG_UNIT
 *   (RocketMQ: TopicSysFlag).
 */
import { toFastJson, type GetTopicsByClusterRequestHeader } from '../../protocol/index.js';
import { SYSTEM_TOPICS } from '../../common/message.js';
import type { BrokerContext, Processor, TopicConfig } from '../broker-context.js';
import { ok } from './responses.js';
import { isSystemTopic } from './topic-validator.js';

/** RocketMQ: TopicSysFlag.FLAG_UNIT and FLAG_UNIT_SUB. */
const FLAG_UNIT = 1;
const FLAG_UNIT_SUB = 2;

const topicList = (topics: Iterable<string>, brokerAddr?: string) =>
  Promise.resolve(
    ok({}, undefined, Buffer.from(toFastJson({ brokerAddr, topicList: [...new Set(topics)].sort() }), 'utf8')),
  );

const topicsWhere = (ctx: BrokerContext, pick: (t: TopicConfig) => boolean): string[] =>
  ctx.topicConfigManager
    .allTopics()
    .filter(pick)
    .map((t) => t.topicName);

export const getTopicsByCluster: Processor = (ctx, request) => {
  const { cluster } = request.header as GetTopicsByClusterRequestHeader;
  return topicList(cluster === ctx.clusterName ? topicsWhere(ctx, () => true) : []);
};

export const getSystemTopicListFromNs: Processor = (ctx) => {
  const listenPort = ctx.ops.config.get('listenPort');
  return topicList([ctx.clusterName, ctx.brokerName], `${ctx.brokerIP}:${listenPort ?? ''}`);
};

export const getSystemTopicListFromBroker: Processor = (ctx) =>
  topicList([
    ...SYSTEM_TOPICS,
    ctx.clusterName,
    ctx.brokerName,
    ...topicsWhere(ctx, (t) => isSystemTopic(t.topicName, ctx)),
  ]);

export const getUnitTopicList: Processor = (ctx) =>
  topicList(topicsWhere(ctx, (t) => (t.topicSysFlag & FLAG_UNIT) !== 0));

export const getHasUnitSubTopicList: Processor = (ctx) =>
  topicList(topicsWhere(ctx, (t) => (t.topicSysFlag & FLAG_UNIT_SUB) !== 0));

export const getHasUnitSubUnUnitTopicList: Processor = (ctx) =>
  topicList(topicsWhere(ctx, (t) => (t.topicSysFlag & FLAG_UNIT) === 0 && (t.topicSysFlag & FLAG_UNIT_SUB) !== 0));
