/**
 * Topic administration, as RocketMQ's `mqadmin` asks it of a broker (and of a NameServer, whose
 * questions the bundled broker answers itself):
 *
 * - GET_ALL_TOPIC_CONFIG (21): no header; body RocketMQ's TopicConfigSerializeWrapper
 *   `{"dataVersion":{"counter":n,"timestamp":ms},"topicConfigTable":{"<topic>":TopicConfig}}`.
 * - GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206): no header; body TopicList `{"topicList":["T",...]}`.
 * - DELETE_TOPIC_IN_BROKER (215): `topic`; removes the topic's config, its consume queues and the
 *   committed offsets of every group on it (the commit log keeps the bytes until retention removes them).
 * - DELETE_TOPIC_IN_NAMESRV (216): `topic`, optional `clusterName`; on the bundled broker the same
 *   as 215 (its route is its topic table).
 * - GET_TOPIC_STATS_INFO (202): `topic`; body TopicStatsTable
 *   `{"offsetTable":{<MessageQueue>:{"lastUpdateTimestamp":ms,"maxOffset":n,"minOffset":n}}}` with the
 *   MessageQueue written as a JSON object key, as fastjson writes it (see fastjson.ts). TOPIC_NOT_EXIST
 *   (17) `topic[<t>] not exist` for an unknown topic.
 * - GET_TOPIC_CONFIG (351, RocketMQ 5): `topic`, optional `lo` (also the logical-queue mapping); body
 *   TopicConfigAndQueueMapping, a TopicConfig with `attributes` and, for a static topic only,
 *   `mappingDetail`. TOPIC_NOT_EXIST (17) `No topic in this broker. topic: <t>` for an unknown topic.
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str } from '../define.js';

export const TopicConfigSchema = z.object({
  topicName: str(),
  readQueueNums: int32(),
  writeQueueNums: int32(),
  perm: int32(),
  topicFilterType: str().default('SINGLE_TAG'),
  topicSysFlag: int32().default(0),
  order: z.boolean().default(false),
});

export const TopicConfigTableBody = z.object({
  dataVersion: z.object({ counter: long(), timestamp: long() }).partial().optional(),
  topicConfigTable: z.record(z.string(), TopicConfigSchema),
});
export type TopicConfigTableBody = z.infer<typeof TopicConfigTableBody>;

export const GetAllTopicConfig = defineCommand({
  code: RequestCode.GET_ALL_TOPIC_CONFIG,
  name: 'GET_ALL_TOPIC_CONFIG',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  responseBody: TopicConfigTableBody,
});

export const TopicListBody = z.object({ topicList: z.array(str()), brokerAddr: str().optional() });
export type TopicListBody = z.infer<typeof TopicListBody>;

export const GetAllTopicListFromNameserver = defineCommand({
  code: RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER,
  name: 'GET_ALL_TOPIC_LIST_FROM_NAMESERVER',
  requestHeader: EmptyHeader,
  responseHeader: EmptyHeader,
  responseBody: TopicListBody,
});

export const DeleteTopicRequestHeader = z.object({ topic: str().min(1) });
export type DeleteTopicRequestHeader = z.infer<typeof DeleteTopicRequestHeader>;

export const DeleteTopicInBroker = defineCommand({
  code: RequestCode.DELETE_TOPIC_IN_BROKER,
  name: 'DELETE_TOPIC_IN_BROKER',
  requestHeader: DeleteTopicRequestHeader,
  responseHeader: EmptyHeader,
});

export const DeleteTopicFromNamesrvRequestHeader = z.object({ topic: str().min(1), clusterName: str().optional() });

export const DeleteTopicInNamesrv = defineCommand({
  code: RequestCode.DELETE_TOPIC_IN_NAMESRV,
  name: 'DELETE_TOPIC_IN_NAMESRV',
  requestHeader: DeleteTopicFromNamesrvRequestHeader,
  responseHeader: EmptyHeader,
});

export const GetTopicStatsInfoRequestHeader = z.object({ topic: str().min(1) });
export type GetTopicStatsInfoRequestHeader = z.infer<typeof GetTopicStatsInfoRequestHeader>;

/** RocketMQ's TopicOffset: one queue's offsets and the store time of its last message (0 when empty). */
export const TopicOffsetSchema = z.object({ minOffset: long(), maxOffset: long(), lastUpdateTimestamp: long() });
export type TopicOffset = z.infer<typeof TopicOffsetSchema>;

export const GetTopicStatsInfo = defineCommand({
  code: RequestCode.GET_TOPIC_STATS_INFO,
  name: 'GET_TOPIC_STATS_INFO',
  requestHeader: GetTopicStatsInfoRequestHeader,
  responseHeader: EmptyHeader,
});

/** RocketMQ's GetTopicConfigRequestHeader; `lo` asks for the static topic's queue mapping as well. */
export const GetTopicConfigRequestHeader = z.object({ topic: str().min(1), lo: z.boolean().optional() });
export type GetTopicConfigRequestHeader = z.infer<typeof GetTopicConfigRequestHeader>;

/** RocketMQ's TopicConfigAndQueueMapping as the broker writes it; `mappingDetail` is absent for a normal topic. */
export const TopicConfigAndQueueMappingBody = TopicConfigSchema.extend({
  attributes: z.record(z.string(), z.string()).default({}),
  mappingDetail: z.record(z.string(), z.unknown()).optional(),
});
export type TopicConfigAndQueueMappingBody = z.infer<typeof TopicConfigAndQueueMappingBody>;

export const GetTopicConfig = defineCommand({
  code: RequestCode.GET_TOPIC_CONFIG,
  name: 'GET_TOPIC_CONFIG',
  requestHeader: GetTopicConfigRequestHeader,
  responseHeader: EmptyHeader,
  responseBody: TopicConfigAndQueueMappingBody,
});

/** The JSON object fastjson writes for a MessageQueue (its fields sorted). */
export const MessageQueueKeySchema = z.object({ topic: str(), brokerName: str(), queueId: int32() });
