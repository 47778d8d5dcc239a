/**
 * The operator commands of RocketMQ 4.9.8's `mqadmin` beyond topics and offsets (RocketMQ:
 * AdminBrokerProcessor): the broker's settings, its stats, producer connections, subscription groups,
 * consume-queue inspection and a consumer's running info. Bodies are fastjson unless said otherwise.
 *
 * - UPDATE_BROKER_CONFIG (25): body Java Properties text. GET_BROKER_CONFIG (26): body Properties text,
 *   response header `version` (the settings' DataVersion JSON). GET_NAMESRV_CONFIG (319): Properties text.
 * - GET_ALL_SUBSCRIPTIONGROUP_CONFIG (201): body SubscriptionGroupWrapper
 *   `{"dataVersion":{...},"subscriptionGroupTable":{"<g>":SubscriptionGroupConfig}}`.
 * - GET_PRODUCER_CONNECTION_LIST (204): `producerGroup`; body ProducerConnection `{"connectionSet":[...]}`.
 * - DELETE_SUBSCRIPTIONGROUP (207): `groupName`, `removeOffset`.
 * - CLONE_GROUP_OFFSET (314): `srcGroup`, `destGroup`, `topic` (blank: every topic of srcGroup), `offline`.
 * - VIEW_BROKER_STATS_DATA (315): `statsName`, `statsKey`; body BrokerStatsData
 *   `{"statsDay":{"avgpt","sum","tps"},"statsHour":{...},"statsMinute":{...}}`.
 * - GET_BROKER_CONSUME_STATS (317): `isOrder`; body ConsumeStatsList.
 * - QUERY_CONSUME_QUEUE (321): `topic`, `queueId`, `index`, `count`, `consumerGroup`; body
 *   QueryConsumeQueueResponseBody.
 * - GET_CONSUMER_RUNNING_INFO (307): `consumerGroup`, `clientId`, `jstackEnable`; forwarded to the client,
 *   whose answer is returned as it is.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const UpdateBrokerConfig = defineCommand({
  code: RequestCode.UPDATE_BROKER_CONFIG,
  name: 'UPDATE_BROKER_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
});

export const GetBrokerConfigResponseHeader = z.object({ version: str().optional() });

export const GetBrokerConfig = defineCommand({
  code: RequestCode.GET_BROKER_CONFIG,
  name: 'GET_BROKER_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: GetBrokerConfigResponseHeader,
});

export const GetNamesrvConfig = defineCommand({
  code: RequestCode.GET_NAMESRV_CONFIG,
  name: 'GET_NAMESRV_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
});

export const GetAllSubscriptionGroupConfig = defineCommand({
  code: RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
  name: 'GET_ALL_SUBSCRIPTIONGROUP_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
});

export const GetProducerConnectionListRequestHeader = z.object({ producerGroup: str().min(1) });
export type GetProducerConnectionListRequestHeader = z.infer<typeof GetProducerConnectionListRequestHeader>;

export const GetProducerConnectionList = defineCommand({
  code: RequestCode.GET_PRODUCER_CONNECTION_LIST,
  name: 'GET_PRODUCER_CONNECTION_LIST',
  requestHeader: GetProducerConnectionListRequestHeader,
  responseHeader: EmptyHeader,
});

export const DeleteSubscriptionGroupRequestHeader = z.object({
  groupName: str().min(1),
  removeOffset: z.boolean().default(false),
});
export type DeleteSubscriptionGroupRequestHeader = z.infer<typeof DeleteSubscriptionGroupRequestHeader>;

export const DeleteSubscriptionGroup = defineCommand({
  code: RequestCode.DELETE_SUBSCRIPTIONGROUP,
  name: 'DELETE_SUBSCRIPTIONGROUP',
  requestHeader: DeleteSubscriptionGroupRequestHeader,
  responseHeader: EmptyHeader,
});

export const CloneGroupOffsetRequestHeader = z.object({
  srcGroup: str().min(1),
  destGroup: str().min(1),
  topic: str().optional(),
  offline: z.boolean().default(false),
});
export type CloneGroupOffsetRequestHeader = z.infer<typeof CloneGroupOffsetRequestHeader>;

export const CloneGroupOffset = defineCommand({
  code: RequestCode.CLONE_GROUP_OFFSET,
  name: 'CLONE_GROUP_OFFSET',
  requestHeader: CloneGroupOffsetRequestHeader,
  responseHeader: EmptyHeader,
});

export const ViewBrokerStatsDataRequestHeader = z.object({ statsName: str().min(1), statsKey: str().min(1) });
export type ViewBrokerStatsDataRequestHeader = z.infer<typeof ViewBrokerStatsDataRequestHeader>;

export const ViewBrokerStatsData = defineCommand({
  code: RequestCode.VIEW_BROKER_STATS_DATA,
  name: 'VIEW_BROKER_STATS_DATA',
  requestHeader: ViewBrokerStatsDataRequestHeader,
  responseHeader: EmptyHeader,
});

export const GetBrokerConsumeStatsRequestHeader = z.object({ isOrder: z.boolean().default(false) });
export type GetBrokerConsumeStatsRequestHeader = z.infer<typeof GetBrokerConsumeStatsRequestHeader>;

export const GetBrokerConsumeStats = defineCommand({
  code: RequestCode.GET_BROKER_CONSUME_STATS,
  name: 'GET_BROKER_CONSUME_STATS',
  requestHeader: GetBrokerConsumeStatsRequestHeader,
  responseHeader: EmptyHeader,
});

export const QueryConsumeQueueRequestHeader = z.object({
  topic: str().min(1),
  queueId: int32().min(0),
  index: long().min(0),
  count: int32().min(1).max(1024),
  consumerGroup: str().optional(),
});
export type QueryConsumeQueueRequestHeader = z.infer<typeof QueryConsumeQueueRequestHeader>;

export const QueryConsumeQueue = defineCommand({
  code: RequestCode.QUERY_CONSUME_QUEUE,
  name: 'QUERY_CONSUME_QUEUE',
  requestHeader: QueryConsumeQueueRequestHeader,
  responseHeader: EmptyHeader,
});

export const GetConsumerRunningInfoRequestHeader = z.object({
  consumerGroup: str().min(1),
  clientId: str().min(1),
  jstackEnable: z.boolean().default(false),
});
export type GetConsumerRunningInfoRequestHeader = z.infer<typeof GetConsumerRunningInfoRequestHeader>;

export const GetConsumerRunningInfo = defineCommand({
  code: RequestCode.GET_CONSUMER_RUNNING_INFO,
  name: 'GET_CONSUMER_RUNNING_INFO',
  requestHeader: GetConsumerRunningInfoRequestHeader,
  responseHeader: EmptyHeader,
});

/** Every command of this file, for the command table. */
export const BROKER_OPS_COMMANDS = [
  UpdateBrokerConfig,
  GetBrokerConfig,
  GetNamesrvConfig,
  GetAllSubscriptionGroupConfig,
  GetProducerConnectionList,
  DeleteSubscriptionGroup,
  CloneGroupOffset,
  ViewBrokerStatsData,
  GetBrokerConsumeStats,
  QueryConsumeQueue,
  GetConsumerRunningInfo,
] as const;
