/**
 * The message model shared by the client, the broker and the codec. Field names are RocketMQ's
 * (`Message`, `MessageExt`, `MessageQueue`); 64-bit fields are JS numbers, and code that reads a
 * 64-bit value refuses one past 2^53 rather than rounding it.
 * @pure
 */

/** A queue of a topic on one broker: RocketMQ's `MessageQueue`. */
export interface MessageQueue {
  topic: string;
  brokerName: string;
  queueId: number;
}

/** A host and port as stored in a message (born host, store host). `ip` is dotted IPv4 or IPv6 text. */
export interface HostAddress {
  ip: string;
  port: number;
}

/** What a producer sends. */
export interface Message {
  topic: string;
  /** The payload. */
  body: Buffer;
  /** RocketMQ's `Message.flag`: opaque to the broker. Default 0. */
  flag?: number;
  /** Tag (the `TAGS` property). */
  tags?: string;
  /** Keys (the `KEYS` property, space-separated when given as a string). */
  keys?: string | string[];
  /** Delay level (1-based, RocketMQ's 18 levels by default): the `DELAY` property. */
  delayTimeLevel?: number;
  /** User properties. Names must not contain `\u0001` or `\u0002`. */
  properties?: Record<string, string>;
}

/** A stored message, as the commit log holds it and a pull returns it (RocketMQ's `MessageExt`). */
export interface MessageExt {
  topic: string;
  flag: number;
  /** The body (decompressed when it was stored compressed); `null` when empty, as RocketMQ decodes it. */
  body: Buffer | null;
  /** Properties; `null` when the message has none, as RocketMQ decodes it. */
  properties: Record<string, string> | null;
  queueId: number;
  queueOffset: number;
  commitLogOffset: number;
  sysFlag: number;
  bornTimestamp: number;
  bornHost: HostAddress;
  storeTimestamp: number;
  storeHost: HostAddress;
  reconsumeTimes: number;
  preparedTransactionOffset: number;
  bodyCRC: number;
  /** Total stored size of the record in bytes. */
  storeSize: number;
  /** The message id: the `UNIQ_KEY` property when present, else the offset message id. */
  msgId: string;
  /** The offset message id (store host + commit-log offset). */
  offsetMsgId?: string;
  /** Broker the message was pulled from (set by the client). */
  brokerName?: string;
  /** For a transactional message (`TRAN_MSG=true`): its `UNIQ_KEY`, set by the client after a pull. */
  transactionId?: string;
}

/** Well-known property names (RocketMQ's MessageConst). */
export const MessageConst = Object.freeze({
  KEYS: 'KEYS',
  TAGS: 'TAGS',
  WAIT: 'WAIT',
  DELAY: 'DELAY',
  RETRY_TOPIC: 'RETRY_TOPIC',
  REAL_TOPIC: 'REAL_TOPIC',
  REAL_QID: 'REAL_QID',
  TRAN_MSG: 'TRAN_MSG',
  PGROUP: 'PGROUP',
  /** How many times the broker asked a transactional producer about a half message (RocketMQ: TRANSACTION_CHECK_TIMES). */
  TRANSACTION_CHECK_TIMES: 'TRANSACTION_CHECK_TIMES',
  /** Seconds before the first check of a half message (RocketMQ: CHECK_IMMUNITY_TIME_IN_SECONDS). */
  CHECK_IMMUNITY_TIME_IN_SECONDS: 'CHECK_IMMUNITY_TIME_IN_SECONDS',
  /** The transaction id a producer set on a message (RocketMQ: PROPERTY_TRANSACTION_ID). */
  TRANSACTION_ID: '__transactionId__',
  MIN_OFFSET: 'MIN_OFFSET',
  MAX_OFFSET: 'MAX_OFFSET',
  ORIGIN_MESSAGE_ID: 'ORIGIN_MESSAGE_ID',
  RECONSUME_TIME: 'RECONSUME_TIME',
  MAX_RECONSUME_TIMES: 'MAX_RECONSUME_TIMES',
  UNIQ_KEY: 'UNIQ_KEY',
  CONSUME_START_TIME: 'CONSUME_START_TIME',
  CLUSTER: 'CLUSTER',
  DLQ_ORIGIN_TOPIC: 'DLQ_ORIGIN_TOPIC',
  DLQ_ORIGIN_MESSAGE_ID: 'DLQ_ORIGIN_MESSAGE_ID',
  /** The ordering key of an ordered send (RocketMQ 5: MessageConst.PROPERTY_SHARDING_KEY). */
  SHARDING_KEY: '__SHARDINGKEY',
  KEY_SEPARATOR: ' ',
});

/** RocketMQ's topic-name prefixes and system topics (MixAll, TopicValidator). */
export const RETRY_GROUP_TOPIC_PREFIX = '%RETRY%';
export const DLQ_GROUP_TOPIC_PREFIX = '%DLQ%';
export const SCHEDULE_TOPIC = 'SCHEDULE_TOPIC_XXXX';

/**
 * RocketMQ's TopicValidator.SYSTEM_TOPIC_SET as a client knows it (a broker adds its cluster and broker
 * names): never namespaced, listed by GET_SYSTEM_TOPIC_LIST, protected from deletion.
 */
export const SYSTEM_TOPICS: readonly string[] = Object.freeze([
  'TBW102',
  SCHEDULE_TOPIC,
  'BenchmarkTest',
  'RMQ_SYS_TRANS_HALF_TOPIC',
  'RMQ_SYS_TRACE_TOPIC',
  'RMQ_SYS_TRANS_OP_HALF_TOPIC',
  'TRANS_CHECK_MAX_TIME_TOPIC',
  'SELF_TEST_TOPIC',
  'OFFSET_MOVED_EVENT',
]);
const SYSTEM_TOPIC_SET: ReadonlySet<string> = new Set(SYSTEM_TOPICS);
/** RocketMQ: TopicValidator.SYSTEM_TOPIC_PREFIX. */
export const SYSTEM_TOPIC_PREFIX = 'rmq_sys_';

/** RocketMQ: TopicValidator.isSystemTopic, without a broker's own cluster and broker names. */
export function isSystemTopicName(topic: string): boolean {
  return SYSTEM_TOPIC_SET.has(topic) || topic.startsWith(SYSTEM_TOPIC_PREFIX);
}

export const retryTopic = (group: string): string => RETRY_GROUP_TOPIC_PREFIX + group;
export const dlqTopic = (group: string): string => DLQ_GROUP_TOPIC_PREFIX + group;

/** Java's `MessageQueue.compareTo`: topic, then brokerName (UTF-16 order), then queueId. */
export function compareMessageQueue(a: MessageQueue, b: MessageQueue): number {
  return (
    compareJavaStrings(a.topic, b.topic) || compareJavaStrings(a.brokerName, b.brokerName) || a.queueId - b.queueId
  );
}

/** Java `String.compareTo`: UTF-16 code-unit order (what JS `<` does on strings). */
export function compareJavaStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** A stable map key for a queue. */
export const messageQueueKey = (mq: MessageQueue): string => `${mq.topic}\u0000${mq.brokerName}\u0000${mq.queueId}`;
