/**
 * The rest of what RocketMQ 4.9.8's `mqadmin` and rocketmq-dashboard ask a broker and its NameServer
 * (RocketMQ: AdminBrokerProcessor, the NameServer's DefaultRequestProcessor). Bodies are fastjson.
 *
 * NameServer side:
 * - PUT_KV_CONFIG (100) `namespace`, `key`, `value`; GET_KV_CONFIG (101) `namespace`, `key` → response
 *   header `value`, QUERY_NOT_FOUND when absent; DELETE_KV_CONFIG (102) `namespace`, `key`;
 *   GET_KVLIST_BY_NAMESPACE (219) `namespace` → body KVTable `{"table":{...}}`.
 * - WIPE_WRITE_PERM_OF_BROKER (205) / ADD_WRITE_PERM_OF_BROKER (327) `brokerName` → response header
 *   `wipeTopicCount` / `addTopicCount`.
 * - GET_TOPICS_BY_CLUSTER (224) `cluster`, GET_SYSTEM_TOPIC_LIST_FROM_NS (304), GET_UNIT_TOPIC_LIST (311),
 *   GET_HAS_UNIT_SUB_TOPIC_LIST (312), GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST (313) → body TopicList.
 * - UPDATE_NAMESRV_CONFIG (318): body Java Properties text.
 *
 * Broker side:
 * - GET_EARLIEST_MSG_STORETIME (32) `topic`, `queueId` → response header `timestamp`.
 * - GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305) → body TopicList.
 * - QUERY_CONSUME_TIME_SPAN (303) `topic`, `group` → body QueryConsumeTimeSpanBody.
 * - QUERY_CORRECTION_OFFSET (308) `topic`, `compareGroup`, `filterGroups` → body QueryCorrectionOffsetBody.
 * - GET_ALL_PRODUCER_INFO (328) → body ProducerTableInfo.
 * - CLEAN_EXPIRED_CONSUMEQUEUE (306), CLEAN_UNUSED_TOPIC (316), DELETE_EXPIRED_COMMITLOG (329): no header.
 * - INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223) `topic`, `group`, `clientAddr` → body GetConsumerStatusBody;
 *   the broker asks each member with GET_CONSUMER_STATUS_FROM_CLIENT (221) `topic`, `group`.
 * - RESUME_CHECK_HALF_MESSAGE (323) `msgId` (an offset message id).
 * @pure
 */
import { z } from 'zod';
import { RequestCode } from '../request-code.js';
import { EmptyHeader, defineCommand, int32, long, str, type CommandSpec } from '../define.js';

export const KvConfigRequestHeader = z.object({ namespace: str().min(1), key: str().min(1) });
export type KvConfigRequestHeader = z.infer<typeof KvConfigRequestHeader>;
export const PutKvConfigRequestHeader = KvConfigRequestHeader.extend({ value: str() });
export type PutKvConfigRequestHeader = z.infer<typeof PutKvConfigRequestHeader>;
export const GetKvListByNamespaceRequestHeader = z.object({ namespace: str().min(1) });
export type GetKvListByNamespaceRequestHeader = z.infer<typeof GetKvListByNamespaceRequestHeader>;

export const PutKvConfig = defineCommand({
  code: RequestCode.PUT_KV_CONFIG,
  name: 'PUT_KV_CONFIG',
  requestHeader: PutKvConfigRequestHeader,
  responseHeader: EmptyHeader,
});
export const GetKvConfig = defineCommand({
  code: RequestCode.GET_KV_CONFIG,
  name: 'GET_KV_CONFIG',
  requestHeader: KvConfigRequestHeader,
  responseHeader: z.object({ value: str().optional() }),
});
export const DeleteKvConfig = defineCommand({
  code: RequestCode.DELETE_KV_CONFIG,
  name: 'DELETE_KV_CONFIG',
  requestHeader: KvConfigRequestHeader,
  responseHeader: EmptyHeader,
});
export const GetKvListByNamespace = defineCommand({
  code: RequestCode.GET_KVLIST_BY_NAMESPACE,
  name: 'GET_KVLIST_BY_NAMESPACE',
  requestHeader: GetKvListByNamespaceRequestHeader,
  responseHeader: EmptyHeader,
});

export const WritePermOfBrokerRequestHeader = z.object({ brokerName: str().min(1) });
export type WritePermOfBrokerRequestHeader = z.infer<typeof WritePermOfBrokerRequestHeader>;

export const WipeWritePermOfBroker = defineCommand({
  code: RequestCode.WIPE_WRITE_PERM_OF_BROKER,
  name: 'WIPE_WRITE_PERM_OF_BROKER',
  requestHeader: WritePermOfBrokerRequestHeader,
  responseHeader: z.object({ wipeTopicCount: int32().optional() }),
});
export const AddWritePermOfBroker = defineCommand({
  code: RequestCode.ADD_WRITE_PERM_OF_BROKER,
  name: 'ADD_WRITE_PERM_OF_BROKER',
  requestHeader: WritePermOfBrokerRequestHeader,
  responseHeader: z.object({ addTopicCount: int32().optional() }),
});

export const GetTopicsByClusterRequestHeader = z.object({ cluster: str().min(1) });
export type GetTopicsByClusterRequestHeader = z.infer<typeof GetTopicsByClusterRequestHeader>;

export const GetTopicsByCluster = defineCommand({
  code: RequestCode.GET_TOPICS_BY_CLUSTER,
  name: 'GET_TOPICS_BY_CLUSTER',
  requestHeader: GetTopicsByClusterRequestHeader,
  responseHeader: EmptyHeader,
});

/** A command with no request header and no response header. */
const plain = (code: number, name: string): CommandSpec =>
  defineCommand({ code, name, requestHeader: EmptyHeader, responseHeader: EmptyHeader });

export const GetSystemTopicListFromNs = plain(
  RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS,
  'GET_SYSTEM_TOPIC_LIST_FROM_NS',
);
export const GetSystemTopicListFromBroker = plain(
  RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER,
  'GET_SYSTEM_TOPIC_LIST_FROM_BROKER',
);
export const GetUnitTopicList = plain(RequestCode.GET_UNIT_TOPIC_LIST, 'GET_UNIT_TOPIC_LIST');
export const GetHasUnitSubTopicList = plain(RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST, 'GET_HAS_UNIT_SUB_TOPIC_LIST');
export const GetHasUnitSubUnUnitTopicList = plain(
  RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST,
  'GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST',
);
export const UpdateNamesrvConfig = plain(RequestCode.UPDATE_NAMESRV_CONFIG, 'UPDATE_NAMESRV_CONFIG');
export const GetAllProducerInfo = plain(RequestCode.GET_ALL_PRODUCER_INFO, 'GET_ALL_PRODUCER_INFO');
export const CleanExpiredConsumeQueue = plain(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, 'CLEAN_EXPIRED_CONSUMEQUEUE');
export const CleanUnusedTopic = plain(RequestCode.CLEAN_UNUSED_TOPIC, 'CLEAN_UNUSED_TOPIC');
export const DeleteExpiredCommitLog = plain(RequestCode.DELETE_EXPIRED_COMMITLOG, 'DELETE_EXPIRED_COMMITLOG');

export const GetEarliestMsgStoretimeRequestHeader = z.object({ topic: str().min(1), queueId: int32().min(0) });
export type GetEarliestMsgStoretimeRequestHeader = z.infer<typeof GetEarliestMsgStoretimeRequestHeader>;

export const GetEarliestMsgStoretime = defineCommand({
  code: RequestCode.GET_EARLIEST_MSG_STORETIME,
  name: 'GET_EARLIEST_MSG_STORETIME',
  requestHeader: GetEarliestMsgStoretimeRequestHeader,
  responseHeader: z.object({ timestamp: long().optional() }),
});

export const QueryConsumeTimeSpanRequestHeader = z.object({ topic: str().min(1), group: str().min(1) });
export type QueryConsumeTimeSpanRequestHeader = z.infer<typeof QueryConsumeTimeSpanRequestHeader>;

export const QueryConsumeTimeSpan = defineCommand({
  code: RequestCode.QUERY_CONSUME_TIME_SPAN,
  name: 'QUERY_CONSUME_TIME_SPAN',
  requestHeader: QueryConsumeTimeSpanRequestHeader,
  responseHeader: EmptyHeader,
});

export const QueryCorrectionOffsetRequestHeader = z.object({
  topic: str().min(1),
  compareGroup: str().min(1),
  /** Groups left out of the minimum, comma-separated. */
  filterGroups: str().optional(),
});
export type QueryCorrectionOffsetRequestHeader = z.infer<typeof QueryCorrectionOffsetRequestHeader>;

export const QueryCorrectionOffset = defineCommand({
  code: RequestCode.QUERY_CORRECTION_OFFSET,
  name: 'QUERY_CORRECTION_OFFSET',
  requestHeader: QueryCorrectionOffsetRequestHeader,
  responseHeader: EmptyHeader,
});

export const GetConsumerStatusRequestHeader = z.object({
  topic: str().min(1),
  group: str().min(1),
  /** One client id to ask; blank: every member. */
  clientAddr: str().optional(),
});
export type GetConsumerStatusRequestHeader = z.infer<typeof GetConsumerStatusRequestHeader>;

export const InvokeBrokerToGetConsumerStatus = defineCommand({
  code: RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS,
  name: 'INVOKE_BROKER_TO_GET_CONSUMER_STATUS',
  requestHeader: GetConsumerStatusRequestHeader,
  responseHeader: EmptyHeader,
});

export const ResumeCheckHalfMessageRequestHeader = z.object({ msgId: str().min(1) });
export type ResumeCheckHalfMessageRequestHeader = z.infer<typeof ResumeCheckHalfMessageRequestHeader>;

export const ResumeCheckHalfMessage = defineCommand({
  code: RequestCode.RESUME_CHECK_HALF_MESSAGE,
  name: 'RESUME_CHECK_HALF_MESSAGE',
  requestHeader: ResumeCheckHalfMessageRequestHeader,
  responseHeader: EmptyHeader,
});

/** Every command of this file, for the command table. */
export const OPS_PARITY_COMMANDS: readonly CommandSpec[] = [
  PutKvConfig,
  GetKvConfig,
  DeleteKvConfig,
  GetKvListByNamespace,
  WipeWritePermOfBroker,
  AddWritePermOfBroker,
  GetTopicsByCluster,
  GetSystemTopicListFromNs,
  GetSystemTopicListFromBroker,
  GetUnitTopicList,
  GetHasUnitSubTopicList,
  GetHasUnitSubUnUnitTopicList,
  UpdateNamesrvConfig,
  GetAllProducerInfo,
  CleanExpiredConsumeQueue,
  CleanUnusedTopic,
  DeleteExpiredCommitLog,
  GetEarliestMsgStoretime,
  QueryConsumeTimeSpan,
  QueryCorrectionOffset,
  InvokeBrokerToGetConsumerStatus,
  ResumeCheckHalfMessage,
];
