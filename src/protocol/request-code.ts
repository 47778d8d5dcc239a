/**
 * Request codes, with RocketMQ's numbers (RequestCode.java), for the commands this project serves.
 * `WATCH_CONSUMER_IDS` is ours: the HTTP stand-in for the broker-initiated NOTIFY_CONSUMER_IDS_CHANGED
 * (docs/protocol.md); its number lies outside every range RocketMQ uses.
 * @pure
 */
export const RequestCode = Object.freeze({
  SEND_MESSAGE: 10,
  PULL_MESSAGE: 11,
  QUERY_CONSUMER_OFFSET: 14,
  UPDATE_CONSUMER_OFFSET: 15,
  UPDATE_AND_CREATE_TOPIC: 17,
  SEARCH_OFFSET_BY_TIMESTAMP: 29,
  GET_MAX_OFFSET: 30,
  GET_MIN_OFFSET: 31,
  VIEW_MESSAGE_BY_ID: 33,
  HEART_BEAT: 34,
  UNREGISTER_CLIENT: 35,
  CONSUMER_SEND_MSG_BACK: 36,
  END_TRANSACTION: 37,
  GET_CONSUMER_LIST_BY_GROUP: 38,
  CHECK_TRANSACTION_STATE: 39,
  NOTIFY_CONSUMER_IDS_CHANGED: 40,
  LOCK_BATCH_MQ: 41,
  UNLOCK_BATCH_MQ: 42,
  CHECK_CLIENT_CONFIG: 46,
  UPDATE_AND_CREATE_ACL_CONFIG: 50,
  DELETE_ACL_CONFIG: 51,
  GET_BROKER_CLUSTER_ACL_INFO: 52,
  UPDATE_GLOBAL_WHITE_ADDRS_CONFIG: 53,
  GET_ROUTEINFO_BY_TOPIC: 105,
  UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: 200,
  SEND_MESSAGE_V2: 310,
  SEND_BATCH_MESSAGE: 320,
  LITE_PULL_MESSAGE: 361,
  GET_CONSUMER_RUNNING_INFO: 307,
  CONSUME_MESSAGE_DIRECTLY: 309,
  WATCH_CONSUMER_IDS: 90001,
  // ---- POP consumption (RocketMQ 5) ----
  POP_MESSAGE: 200050,
  ACK_MESSAGE: 200051,
  PEEK_MESSAGE: 200052,
  CHANGE_MESSAGE_INVISIBLETIME: 200053,
  BATCH_ACK_MESSAGE: 200151,
  QUERY_ASSIGNMENT: 400,
  SET_MESSAGE_REQUEST_MODE: 401,
  // ---- admin (mqadmin) ----
  QUERY_MESSAGE: 12,
  GET_ALL_TOPIC_CONFIG: 21,
  GET_TOPIC_STATS_INFO: 202,
  GET_CONSUMER_CONNECTION_LIST: 203,
  GET_ALL_TOPIC_LIST_FROM_NAMESERVER: 206,
  GET_CONSUME_STATS: 208,
  DELETE_TOPIC_IN_BROKER: 215,
  DELETE_TOPIC_IN_NAMESRV: 216,
  /** Broker to client (oneway): a group's offsets on a topic were reset; body ResetOffsetBody. */
  RESET_CONSUMER_CLIENT_OFFSET: 220,
  INVOKE_BROKER_TO_RESET_OFFSET: 222,
  /** RocketMQ 5: one topic's config (5.x mqadmin topicStatus asks it of every broker of the route). */
  GET_TOPIC_CONFIG: 351,
  // ---- operator commands (mqadmin): settings, stats, connections, groups ----
  UPDATE_BROKER_CONFIG: 25,
  GET_BROKER_CONFIG: 26,
  GET_ALL_SUBSCRIPTIONGROUP_CONFIG: 201,
  GET_PRODUCER_CONNECTION_LIST: 204,
  DELETE_SUBSCRIPTIONGROUP: 207,
  CLONE_GROUP_OFFSET: 314,
  VIEW_BROKER_STATS_DATA: 315,
  GET_BROKER_CONSUME_STATS: 317,
  GET_NAMESRV_CONFIG: 319,
  QUERY_CONSUME_QUEUE: 321,
  // ---- NameServer (mqadmin clusterList; the AdminClient's list of brokers with namesrvAddr) ----
  GET_BROKER_CLUSTER_INFO: 106,
  // ---- operator parity (mqadmin and rocketmq-dashboard): NameServer KV config and write perm, topic lists,
  // consume time spans, store maintenance, consumer status, half-message resume ----
  GET_EARLIEST_MSG_STORETIME: 32,
  PUT_KV_CONFIG: 100,
  GET_KV_CONFIG: 101,
  DELETE_KV_CONFIG: 102,
  WIPE_WRITE_PERM_OF_BROKER: 205,
  GET_KVLIST_BY_NAMESPACE: 219,
  /** Broker to client: the consumer's offsets of a topic (RocketMQ: ClientRemotingProcessor.getConsumeStatus). */
  GET_CONSUMER_STATUS_FROM_CLIENT: 221,
  INVOKE_BROKER_TO_GET_CONSUMER_STATUS: 223,
  GET_TOPICS_BY_CLUSTER: 224,
  QUERY_CONSUME_TIME_SPAN: 303,
  GET_SYSTEM_TOPIC_LIST_FROM_NS: 304,
  GET_SYSTEM_TOPIC_LIST_FROM_BROKER: 305,
  CLEAN_EXPIRED_CONSUMEQUEUE: 306,
  QUERY_CORRECTION_OFFSET: 308,
  GET_UNIT_TOPIC_LIST: 311,
  GET_HAS_UNIT_SUB_TOPIC_LIST: 312,
  GET_HAS_UNIT_SUB_UNUNIT_TOPIC_LIST: 313,
  CLEAN_UNUSED_TOPIC: 316,
  UPDATE_NAMESRV_CONFIG: 318,
  RESUME_CHECK_HALF_MESSAGE: 323,
  ADD_WRITE_PERM_OF_BROKER: 327,
  GET_ALL_PRODUCER_INFO: 328,
  DELETE_EXPIRED_COMMITLOG: 329,
} as const);

export type RequestCodeName = keyof typeof RequestCode;
export type RequestCodeValue = (typeof RequestCode)[RequestCodeName];

const NAMES = new Map<number, RequestCodeName>(
  Object.entries(RequestCode).map(([k, v]) => [v, k as RequestCodeName] as const),
);

/** The name of a request code, or undefined for one this project does not serve. */
export function requestCodeName(code: number): RequestCodeName | undefined {
  return NAMES.get(code);
}
