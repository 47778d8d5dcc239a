/**
 * The processor table: request code → processor (RocketMQ: registerProcessor in BrokerController).
 * Each processor lives in `processors/<command>.ts` and is named after its command.
 */
import { RequestCode } from '../protocol/index.js';
import type { Processor } from './broker-context.js';
import { getMaxOffset } from './processors/get-max-offset.js';
import { getMinOffset } from './processors/get-min-offset.js';
import { getRouteInfoByTopic } from './processors/get-route-info-by-topic.js';
import { pullMessage } from './processors/pull-message.js';
import { queryConsumerOffset } from './processors/query-consumer-offset.js';
import { searchOffsetByTimestamp } from './processors/search-offset-by-timestamp.js';
import { sendMessage } from './processors/send-message.js';
import { updateAndCreateSubscriptionGroup } from './processors/update-and-create-subscription-group.js';
import { updateAndCreateTopic } from './processors/update-and-create-topic.js';
import { updateConsumerOffset } from './processors/update-consumer-offset.js';
import { viewMessageById } from './processors/view-message-by-id.js';
import { consumerSendMsgBack } from './processors/consumer-send-msg-back.js';
import { getConsumerListByGroup } from './processors/get-consumer-list-by-group.js';
import { heartBeat } from './processors/heart-beat.js';
import { unregisterClient } from './processors/unregister-client.js';
import { watchConsumerIds } from './processors/watch-consumer-ids.js';
import { lockBatchMq, unlockBatchMq } from './processors/lock-batch-mq.js';
import { deleteTopicInBroker } from './processors/delete-topic-in-broker.js';
import { getAllTopicConfig } from './processors/get-all-topic-config.js';
import { getAllTopicListFromNameserver } from './processors/get-all-topic-list-from-nameserver.js';
import { getConsumeStats } from './processors/get-consume-stats.js';
import { getConsumerConnectionList } from './processors/get-consumer-connection-list.js';
import { getTopicStatsInfo } from './processors/get-topic-stats-info.js';
import { getTopicConfig } from './processors/get-topic-config.js';
import { invokeBrokerToResetOffset } from './processors/invoke-broker-to-reset-offset.js';
import { queryMessage } from './processors/query-message.js';
import { checkClientConfig } from './processors/check-client-config.js';
import { getBrokerConfig, getNamesrvConfig, updateBrokerConfig } from './processors/broker-config.js';
import { getProducerConnectionList } from './processors/get-producer-connection-list.js';
import {
  cloneGroupOffset,
  deleteSubscriptionGroup,
  getAllSubscriptionGroupConfig,
} from './processors/subscription-groups.js';
import { getBrokerConsumeStats, viewBrokerStatsData } from './processors/broker-stats.js';
import { queryConsumeQueue } from './processors/query-consume-queue.js';
import { getConsumerRunningInfo } from './processors/get-consumer-running-info.js';
import { popMessage } from './processors/pop-message.js';
import { ackMessage, batchAckMessage, changeInvisibleTime } from './processors/ack-message.js';
import { queryAssignment, setMessageRequestMode } from './processors/query-assignment.js';
import { endTransaction } from './processors/end-transaction.js';
import { deleteKvConfig, getKvConfig, getKvListByNamespace, putKvConfig } from './processors/kv-config.js';
import { addWritePermOfBroker, wipeWritePermOfBroker } from './processors/write-perm-of-broker.js';
import {
  getHasUnitSubTopicList,
  getHasUnitSubUnUnitTopicList,
  getSystemTopicListFromBroker,
  getSystemTopicListFromNs,
  getTopicsByCluster,
  getUnitTopicList,
} from './processors/topic-lists.js';
import {
  getEarliestMsgStoretime,
  queryConsumeTimeSpan,
  queryCorrectionOffset,
} from './processors/consume-time-span.js';
import { getAllProducerInfo } from './processors/get-all-producer-info.js';
import { updateNamesrvConfig } from './processors/broker-config.js';
import { cleanExpiredConsumeQueue, cleanUnusedTopic, deleteExpiredCommitLog } from './processors/store-maintenance.js';
import { getConsumerStatus } from './processors/get-consumer-status.js';
import { resumeCheckHalfMessage } from './processors/resume-check-half-message.js';
import {
  deleteAclConfig,
  getBrokerClusterAclInfo,
  updateAndCreateAclConfig,
  updateGlobalWhiteAddrsConfig,
} from './processors/acl-config.js';

/** The core's processors: pull, send, offsets, route and admin. */
function registerCoreProcessors(table: Map<number, Processor>): void {
  table.set(RequestCode.PULL_MESSAGE, pullMessage);
  table.set(RequestCode.LITE_PULL_MESSAGE, pullMessage);
  table.set(RequestCode.SEND_MESSAGE, sendMessage);
  table.set(RequestCode.SEND_BATCH_MESSAGE, sendMessage);
  table.set(RequestCode.QUERY_CONSUMER_OFFSET, queryConsumerOffset);
  table.set(RequestCode.UPDATE_CONSUMER_OFFSET, updateConsumerOffset);
  table.set(RequestCode.GET_MIN_OFFSET, getMinOffset);
  table.set(RequestCode.GET_MAX_OFFSET, getMaxOffset);
  table.set(RequestCode.SEARCH_OFFSET_BY_TIMESTAMP, searchOffsetByTimestamp);
  table.set(RequestCode.GET_ROUTEINFO_BY_TOPIC, getRouteInfoByTopic);
  table.set(RequestCode.UPDATE_AND_CREATE_TOPIC, updateAndCreateTopic);
  table.set(RequestCode.UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, updateAndCreateSubscriptionGroup);
  table.set(RequestCode.VIEW_MESSAGE_BY_ID, viewMessageById);
  table.set(RequestCode.END_TRANSACTION, endTransaction);
}

/**
 * Consumer groups: heartbeat, unregister, consumer list, watch, send-back (the groups side adds its
 * processors here, one line each).
 */
function registerGroupProcessors(table: Map<number, Processor>): void {
  // ---- BEGIN group processors ----
  table.set(RequestCode.HEART_BEAT, heartBeat);
  table.set(RequestCode.UNREGISTER_CLIENT, unregisterClient);
  table.set(RequestCode.GET_CONSUMER_LIST_BY_GROUP, getConsumerListByGroup);
  table.set(RequestCode.WATCH_CONSUMER_IDS, watchConsumerIds);
  table.set(RequestCode.CONSUMER_SEND_MSG_BACK, consumerSendMsgBack);
  table.set(RequestCode.LOCK_BATCH_MQ, lockBatchMq);
  table.set(RequestCode.UNLOCK_BATCH_MQ, unlockBatchMq);
  table.set(RequestCode.CHECK_CLIENT_CONFIG, checkClientConfig);
  // ---- END group processors ----
}

/** Administration, as RocketMQ's mqadmin asks it (RocketMQ: AdminBrokerProcessor, QueryMessageProcessor). */
function registerAdminProcessors(table: Map<number, Processor>): void {
  table.set(RequestCode.GET_ALL_TOPIC_CONFIG, getAllTopicConfig);
  table.set(RequestCode.GET_ALL_TOPIC_LIST_FROM_NAMESERVER, getAllTopicListFromNameserver);
  table.set(RequestCode.DELETE_TOPIC_IN_BROKER, deleteTopicInBroker);
  table.set(RequestCode.DELETE_TOPIC_IN_NAMESRV, deleteTopicInBroker);
  table.set(RequestCode.GET_TOPIC_STATS_INFO, getTopicStatsInfo);
  table.set(RequestCode.GET_TOPIC_CONFIG, getTopicConfig);
  table.set(RequestCode.GET_CONSUME_STATS, getConsumeStats);
  table.set(RequestCode.GET_CONSUMER_CONNECTION_LIST, getConsumerConnectionList);
  table.set(RequestCode.INVOKE_BROKER_TO_RESET_OFFSET, invokeBrokerToResetOffset);
  table.set(RequestCode.QUERY_MESSAGE, queryMessage);
}

/** The operator commands: settings, stats, connections, groups, consume queues, consumer status. */
function registerOpsProcessors(table: Map<number, Processor>): void {
  table.set(RequestCode.GET_BROKER_CONFIG, getBrokerConfig);
  table.set(RequestCode.UPDATE_BROKER_CONFIG, updateBrokerConfig);
  table.set(RequestCode.GET_NAMESRV_CONFIG, getNamesrvConfig);
  table.set(RequestCode.GET_PRODUCER_CONNECTION_LIST, getProducerConnectionList);
  table.set(RequestCode.GET_ALL_SUBSCRIPTIONGROUP_CONFIG, getAllSubscriptionGroupConfig);
  table.set(RequestCode.DELETE_SUBSCRIPTIONGROUP, deleteSubscriptionGroup);
  table.set(RequestCode.CLONE_GROUP_OFFSET, cloneGroupOffset);
  table.set(RequestCode.VIEW_BROKER_STATS_DATA, viewBrokerStatsData);
  table.set(RequestCode.GET_BROKER_CONSUME_STATS, getBrokerConsumeStats);
  table.set(RequestCode.QUERY_CONSUME_QUEUE, queryConsumeQueue);
  table.set(RequestCode.GET_CONSUMER_RUNNING_INFO, getConsumerRunningInfo);
}

/**
 * The rest of mqadmin's and the dashboard's codes: the NameServer's KV config, write perm, topic lists and
 * settings; consume time spans; store maintenance; consumer status; half-message resume.
 */
function registerOpsParityProcessors(table: Map<number, Processor>): void {
  table.set(RequestCode.PUT_KV_CONFIG, putKvConfig);
  table.set(RequestCode.GET_KV_CONFIG, getKvConfig);
  table.set(RequestCode.DELETE_KV_CONFIG, deleteKvConfig);
  table.set(RequestCode.GET_KVLIST_BY_NAMESPACE, getKvListByNamespace);
  table.set(RequestCode.WIPE_WRITE_PERM_OF_BROKER, wipeWritePermOfBroker);
  table.set(RequestCode.ADD_WRITE_PERM_OF_BROKER, addWritePermOfBroker);
  table.set(RequestCode.GET_TOPICS_BY_CLUSTER, getTopicsByCluster);
  table.set(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_NS, getSystemTopicListFromNs);
  table.set(RequestCode.GET_SYSTEM_TOPIC_LIST_FROM_BROKER, getSystemTopicListFromBroker);
  table.set(RequestCode.GET_UNIT_TOPIC_LIST, getUnitTopicList);
  table.set(RequestCode.GET_HAS_UNIT_SUB_TOPIC_LIST, getHasUnitSubTopicList);
  table.set(RequestCode.GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST, getHasUnitSubUnUnitTopicList);
  table.set(RequestCode.UPDATE_NAMESRV_CONFIG, updateNamesrvConfig);
  table.set(RequestCode.GET_EARLIEST_MSG_STORETIME, getEarliestMsgStoretime);
  table.set(RequestCode.QUERY_CONSUME_TIME_SPAN, queryConsumeTimeSpan);
  table.set(RequestCode.QUERY_CORRECTION_OFFSET, queryCorrectionOffset);
  table.set(RequestCode.GET_ALL_PRODUCER_INFO, getAllProducerInfo);
  table.set(RequestCode.CLEAN_EXPIRED_CONSUMEQUEUE, cleanExpiredConsumeQueue);
  table.set(RequestCode.CLEAN_UNUSED_TOPIC, cleanUnusedTopic);
  table.set(RequestCode.DELETE_EXPIRED_COMMITLOG, deleteExpiredCommitLog);
  table.set(RequestCode.INVOKE_BROKER_TO_GET_CONSUMER_STATUS, getConsumerStatus);
  table.set(RequestCode.RESUME_CHECK_HALF_MESSAGE, resumeCheckHalfMessage);
  table.set(RequestCode.UPDATE_AND_CREATE_ACL_CONFIG, updateAndCreateAclConfig);
  table.set(RequestCode.DELETE_ACL_CONFIG, deleteAclConfig);
  table.set(RequestCode.GET_BROKER_CLUSTER_ACL_INFO, getBrokerClusterAclInfo);
  table.set(RequestCode.UPDATE_GLOBAL_WHITE_ADDRS_CONFIG, updateGlobalWhiteAddrsConfig);
}

/** RocketMQ 5's POP consumption (PopMessageProcessor, AckMessageProcessor, ChangeInvisibleTimeProcessor, QueryAssignmentProcessor). */
function registerPopProcessors(table: Map<number, Processor>): void {
  table.set(RequestCode.POP_MESSAGE, popMessage);
  table.set(RequestCode.ACK_MESSAGE, ackMessage);
  table.set(RequestCode.BATCH_ACK_MESSAGE, batchAckMessage);
  table.set(RequestCode.CHANGE_MESSAGE_INVISIBLETIME, changeInvisibleTime);
  table.set(RequestCode.QUERY_ASSIGNMENT, queryAssignment);
  table.set(RequestCode.SET_MESSAGE_REQUEST_MODE, setMessageRequestMode);
}

/** Builds the table. */
export function createProcessorTable(): ReadonlyMap<number, Processor> {
  const table = new Map<number, Processor>();
  registerCoreProcessors(table);
  registerGroupProcessors(table);
  registerAdminProcessors(table);
  registerOpsProcessors(table);
  registerOpsParityProcessors(table);
  registerPopProcessors(table);
  return table;
}
