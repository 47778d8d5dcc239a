/**
 * The broker's parts as the processors see them. Every processor is a function of the context, the
 * validated request and the caller's connection; the managers behind the context are owned by the
 * Broker, which builds the context at start and tears it down at shutdown.
 *
 * Ownership (who implements what):
 * - broker.ts, topic-config-manager.ts, subscription-group-manager.ts, consumer-offset-manager.ts,
 *   pull-request-hold-service.ts and the pull / send / offset / route / admin processors;
 * - consumer-manager.ts, consumer-filter-manager.ts, schedule-message-service.ts and the heartbeat /
 *   unregister / consumer-list / watch / send-back processors.
 */
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { MessageExt } from '../common/message.js';
import type { RemotingRequest, RemotingResponse, SubscriptionGroupConfig } from '../protocol/index.js';
import type { MessageStore, MessageToStore, PutMessageResult } from '../store/index.js';

/** RocketMQ's TopicConfig. */
export interface TopicConfig {
  topicName: string;
  readQueueNums: number;
  writeQueueNums: number;
  /** PermName bits: READ 4, WRITE 2, INHERIT 1. */
  perm: number;
  topicFilterType: 'SINGLE_TAG' | 'MULTI_TAG';
  topicSysFlag: number;
  order: boolean;
}

export interface TopicConfigManagerApi {
  selectTopicConfig(topic: string): TopicConfig | undefined;
  /** Creates (and persists) the topic when absent; returns the config. Used by send-back for %RETRY% / %DLQ%. */
  createTopicIfAbsent(topic: string, queueNums: number, perm: number, topicSysFlag?: number): TopicConfig;
  updateTopicConfig(config: TopicConfig): void;
}

export interface SubscriptionGroupManagerApi {
  /** Finds the group's config; auto-creates it (with RocketMQ's defaults) when auto-creation is enabled and the name is valid. */
  findSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined;
  updateSubscriptionGroupConfig(config: SubscriptionGroupConfig): void;
}

/** What a processor knows of the caller. */
export interface ConnectionInfo {
  /** `ip:port` of the peer. */
  remoteAddress: string;
  /** Aborted when the client goes away (its HTTP request closed) before an answer was sent. */
  signal: AbortSignal;
}

/** A subscription as the broker keeps it (RocketMQ's SubscriptionData). */
export interface BrokerSubscriptionData {
  topic: string;
  subString: string;
  tagsSet: string[];
  codeSet: number[];
  subVersion: number;
  expressionType: string;
  classFilterMode: boolean;
}

/** A consumer group's live state as registered by heartbeats (RocketMQ's ConsumerGroupInfo). */
export interface ConsumerGroupInfoApi {
  readonly groupName: string;
  readonly messageModel: 'CLUSTERING' | 'BROADCASTING';
  readonly consumeType: 'CONSUME_ACTIVELY' | 'CONSUME_PASSIVELY' | 'CONSUME_POP';
  readonly consumeFromWhere: string;
  findSubscriptionData(topic: string): BrokerSubscriptionData | undefined;
  /** Client ids of the live members. */
  getAllClientIds(): string[];
}

export interface ConsumerManagerApi {
  getConsumerGroupInfo(group: string): ConsumerGroupInfoApi | undefined;
}

/** A compiled SQL92 subscription of a group on a topic (RocketMQ's ConsumerFilterData). */
export interface ConsumerFilterDataApi {
  consumerGroup: string;
  topic: string;
  expression: string;
  expressionType: string;
  /** The subscription version the filter was built for (RocketMQ: clientVersion). */
  clientVersion: number;
  bornTime: number;
  /** The compiled expression's broker decision. */
  matches(properties: Record<string, string> | null): boolean;
}

export interface ConsumerFilterManagerApi {
  get(topic: string, consumerGroup: string): ConsumerFilterDataApi | undefined;
}

export interface ScheduleMessageServiceApi {
  /**
   * RocketMQ's delay transform (HookUtils): a message with DELAY > 0 (not a prepared/rollback
   * transaction) is moved to SCHEDULE_TOPIC_XXXX, queue level-1, with REAL_TOPIC / REAL_QID saved.
   * Returns the message to store (the same object, changed, or untouched).
   */
  transformDelayedMessage(msg: MessageToStore): MessageToStore;
}

export interface BrokerContext {
  readonly brokerName: string;
  readonly clusterName: string;
  /** This broker's address as clients reach it (its HTTP base URL). */
  readonly brokerAddress: string;
  readonly options: Readonly<Record<string, unknown>>;
  readonly store: MessageStore;
  readonly topicConfigManager: TopicConfigManagerApi;
  readonly subscriptionGroupManager: SubscriptionGroupManagerApi;
  readonly consumerManager: ConsumerManagerApi;
  readonly consumerFilterManager: ConsumerFilterManagerApi;
  readonly scheduleMessageService: ScheduleMessageServiceApi;
  readonly clock: Clock;
  readonly logger: Logger;
  /** Puts a message through the broker's send path (delay transform, store), as SEND_MESSAGE does. */
  putMessage(msg: MessageToStore): Promise<PutMessageResult>;
  /** Reads one stored message by commit-log offset. */
  lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null>;
}

/** A processor: one per request code, named after the command (STYLE habit 3). */
export type Processor = (
  ctx: BrokerContext,
  request: RemotingRequest<Record<string, unknown>>,
  connection: ConnectionInfo,
) => Promise<RemotingResponse>;
