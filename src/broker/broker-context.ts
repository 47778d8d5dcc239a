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
import type { RebalanceLockManager } from './rebalance-lock-manager.js';
import type { Clock } from '../common/clock.js';
import type { Logger } from '../common/logger.js';
import type { MessageExt } from '../common/message.js';
import type { RemotingRequest, RemotingResponse, SubscriptionGroupConfig } from '../protocol/index.js';
import type { MessageStore, MessageToStore, PutMessageResult } from '../store/index.js';
import type { ResolvedBrokerOptions } from './broker-options.js';
import type { HeldPullRequest } from './pull-request-hold-service.js';
import type { ClientGone } from './client-gone.js';
import type { BrokerStatsManager } from './broker-stats-manager.js';
import type { ClientChannelTable } from './client-channel-table.js';
import type { BrokerConfigTable } from './broker-config-table.js';
import type { NameServerState } from './name-server-state.js';
import type { AclGuard } from './acl/acl-guard.js';
import type { TransactionalMessageService } from './transaction/transactional-message-service.js';

export type { ClientGone } from './client-gone.js';

/** A client's answer to a request the broker forwarded to it. */
export interface ClientAnswer {
  code: number;
  remark: string | null;
  extFields: Record<string, string | null> | null;
  body: Buffer | null;
}

/**
 * What the operator commands (RocketMQ's mqadmin) need beyond the managers: stats counters, the
 * clients' announced identities, the broker's settings, runtime figures and calls to clients.
 */
export interface BrokerOpsApi {
  readonly stats: BrokerStatsManager;
  readonly clients: ClientChannelTable;
  readonly config: BrokerConfigTable;
  /** The NameServer role's KV config, settings and write perm (RocketMQ: NamesrvController). */
  readonly nameServer: NameServerState;
  /** The plain ACL, when the broker runs with an ACL file (RocketMQ: PlainAccessValidator). */
  readonly acl?: AclGuard | undefined;
  /** RocketMQ's broker runtime figures (GET_BROKER_RUNTIME_INFO's KVTable). */
  runtimeInfo(): Record<string, string>;
  /**
   * Sends a request to a client over its remoting connection and waits for the answer (rejects with a
   * ClientCallError on timeout or close); undefined when the client has no remoting connection.
   */
  callClient(
    clientId: string,
    request: { code: number; extFields: Record<string, string>; body: Buffer | null },
    timeoutMs: number,
  ): Promise<ClientAnswer> | undefined;
  /**
   * Sends a oneway request to a member of a consumer group over its remoting connection (RocketMQ:
   * Broker2Client's invokeOneway); false when it has none that reads what it is sent.
   */
  sendOnewayToConsumer(
    clientId: string,
    group: string,
    request: { code: number; extFields: Record<string, string>; body: Buffer | null },
  ): boolean;
}

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
  /** Added by the admin side: every topic config. */
  allTopics(): TopicConfig[];
  /** Added by the admin side: removes a topic's config; false when unknown. */
  deleteTopicConfig(topic: string): boolean;
  /** Added by the admin side: the table's data version. */
  getDataVersion(): { counter: number; timestamp: number };
  /**
   * Added by the core. RocketMQ: createTopicInSendMessageMethod — creates `topic` from the template
   * `defaultTopic` (TBW102) when the template carries INHERIT; undefined when it may not.
   */
  createTopicInSendMessageMethod(
    topic: string,
    defaultTopic: string,
    clientDefaultTopicQueueNums: number,
    topicSysFlag: number,
  ): TopicConfig | undefined;
  /** Why a send may not create a new topic now (the auto-creation limit), or undefined. */
  autoCreateLimitRemark?(): string | undefined;
}

export interface SubscriptionGroupManagerApi {
  /** Finds the group's config; auto-creates it (with RocketMQ's defaults) when auto-creation is enabled and the name is valid. */
  findSubscriptionGroupConfig(group: string): SubscriptionGroupConfig | undefined;
  updateSubscriptionGroupConfig(config: SubscriptionGroupConfig): void;
  /** Added by the core: whether the group's config exists (never creates it). */
  containsSubscriptionGroup(group: string): boolean;
  /** Why a new group is not created on first use now (the auto-creation limit), or undefined. */
  autoCreateLimitRemark?(): string | undefined;
  /** Added by the operator side: every group's config. */
  allSubscriptionGroups(): SubscriptionGroupConfig[];
  /** Added by the operator side: the table's data version. */
  getDataVersion(): { counter: number; timestamp: number };
  /** Added by the operator side: removes a group's config; false when it had none. */
  deleteSubscriptionGroupConfig(group: string): boolean;
}

/** What a processor knows of the caller. */
export interface ConnectionInfo extends ClientGone {
  /** `ip:port` of the peer. */
  readonly remoteAddress: string;
  /** Aborted when the client goes away (its HTTP request closed) before an answer was sent. */
  readonly signal: AbortSignal;
  /**
   * Counts the calls of this connection held until something happens (suspended pulls): in flight, but
   * no work for the broker, so the remoting listener keeps reading a connection that holds many.
   * `held(1)` when a call is suspended, `held(-1)` when it wakes or is dropped.
   */
  held(delta: 1 | -1): void;
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
  /** Added by the admin side: the live members. */
  getChannels(): ReadonlyArray<{ readonly clientId: string; readonly remoteAddress: string }>;
  /** Added by the admin side: the group's subscription table. */
  getSubscriptions(): BrokerSubscriptionData[];
}

export interface ConsumerManagerApi {
  getConsumerGroupInfo(group: string): ConsumerGroupInfoApi | undefined;
  /**
   * Added by the groups side (heart-beat processor): registers a consumer of `group`; true when it joined
   * or the group's topic set changed. `notifyEnabled` is the group's notifyConsumerIdsChangedEnable.
   */
  registerConsumer(group: string, registration: ConsumerRegistration, notifyEnabled: boolean): boolean;
  /** Added by the groups side (unregister-client processor): true when the client was a member. */
  unregisterConsumer(group: string, clientId: string, notifyEnabled: boolean): boolean;
  /**
   * Added by the groups side (watch-consumer-ids processor): answers at once when the group's membership
   * version differs from `knownVersion`, else when it moves or after `timeoutMs`; null when `signal` aborted.
   */
  watch(
    group: string,
    clientId: string,
    knownVersion: number,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<ConsumerIdsSnapshot | null>;
  /** Added by the groups side: the group's membership version and members now. */
  snapshot(group: string): ConsumerIdsSnapshot;
  /** Added by the groups side: producer groups announced by heartbeats. */
  readonly producerManager: ProducerManagerApi;
}

/** Added by the groups side: what a heartbeat says about one consumer of a group (RocketMQ: ConsumerData). */
export interface ConsumerRegistration {
  clientId: string;
  /** `ip:port` the heartbeat came from. */
  remoteAddress: string;
  consumeType: ConsumerGroupInfoApi['consumeType'];
  messageModel: ConsumerGroupInfoApi['messageModel'];
  consumeFromWhere: string;
  subscriptions: readonly BrokerSubscriptionData[];
  /** Keep the group's subscriptions as they are (RocketMQ: heartbeat V2 `withoutSub`, registerConsumerWithoutSub). */
  withoutSub?: boolean;
}

/** Added by the groups side: a group's membership as WATCH_CONSUMER_IDS answers it. */
export interface ConsumerIdsSnapshot {
  /** Opaque; differs whenever the membership changed; 0 for a group never seen. */
  version: number;
  clientIds: string[];
}

/** Added by the groups side: RocketMQ's ProducerManager as the processors use it. */
export interface ProducerManagerApi {
  registerProducer(group: string, clientId: string): void;
  unregisterProducer(group: string, clientId: string): boolean;
  /** Added by the operator side: client ids of a producer group's live members. */
  getClientIds(group: string): string[];
  /** Added by the operator side: every producer group with a live member. */
  getGroups(): string[];
  /** Added by the operator side: the member's last heartbeat, ms, or undefined when it is not a member. */
  lastUpdateTimestamp(group: string, clientId: string): number | undefined;
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

/** The committed-offset table as processors use it (RocketMQ: ConsumerOffsetManager; consumer-offset-manager.ts). */
export interface ConsumerOffsetManagerApi {
  commitOffset(
    clientHost: string,
    group: string,
    topic: string,
    queueId: number,
    offset: number,
    increaseOnly?: boolean,
  ): void;
  /** The committed offset, or -1 when the group has none for the queue. */
  queryOffset(group: string, topic: string, queueId: number): number;
  commitPullOffset(group: string, topic: string, queueId: number, offset: number): void;
  queryPullOffset(group: string, topic: string, queueId: number): number;
  /** Added by the admin side: every committed offset of a group, topic → queueId → offset (a copy). */
  offsetsOfGroup(group: string): Map<string, Map<number, number>>;
  /** Added by the admin side: topics on which the group has committed offsets. */
  whichTopicByConsumer(group: string): string[];
  /** Added by the operator side: the groups with committed offsets on the topic. */
  whichGroupByTopic(topic: string): string[];
  /** Added by the operator side: forgets a deleted group's offsets; returns the topics affected. */
  removeOffsetsOfGroup(group: string): string[];
  /** Added by the operator side: copies a group's committed offsets on a topic to another group. */
  cloneOffset(srcGroup: string, destGroup: string, topic: string): boolean;
  /** Added by the admin side: forgets the offsets on a deleted topic. */
  removeOffsetsOfTopic(topic: string): string[];
  /** Added by the admin side: an administrator's offset reset, pending until the group's next pull. */
  assignResetOffset(topic: string, group: string, queueId: number, offset: number): void;
  /** Added by the admin side: the pending reset of a queue, removed; undefined when none. */
  queryThenEraseResetOffset(topic: string, group: string, queueId: number): number | undefined;
  /** Added by the admin side: the group's consumed messages per second over the last minute. */
  consumeTps(group: string): number;
}

/** Long polling as the pull processor uses it (pull-request-hold-service.ts). */
export interface PullRequestHoldServiceApi {
  suspendPullRequest(request: HeldPullRequest): void;
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
  /** Added by the core: the resolved broker options, typed (the same object as `options`). */
  readonly brokerConfig: ResolvedBrokerOptions;
  /** Added by the core: the host part of `brokerAddress` (RocketMQ: brokerIP1), used in remarks. */
  readonly brokerIP: string;
  /** Added by the core: committed offsets (QUERY/UPDATE_CONSUMER_OFFSET, commit-on-pull). */
  readonly consumerOffsetManager: ConsumerOffsetManagerApi;
  /** Added by the core: long polling. */
  readonly pullRequestHoldService: PullRequestHoldServiceApi;
  /** The queue locks of orderly consumption (LOCK_BATCH_MQ / UNLOCK_BATCH_MQ). */
  readonly rebalanceLockManager: RebalanceLockManager;
  /** Puts a message through the broker's send path (delay transform, store), as SEND_MESSAGE does. */
  putMessage(msg: MessageToStore): Promise<PutMessageResult>;
  /** Reads one stored message by commit-log offset. */
  lookMessageByOffset(commitLogOffset: number): Promise<MessageExt | null>;
  /** Stats, client identities, settings and client calls for the operator commands. */
  readonly ops: BrokerOpsApi;
  /** Half messages, END_TRANSACTION and the check-back (RocketMQ: TransactionalMessageService). */
  readonly transactionalMessageService?: TransactionalMessageService;
}

/**
 * A request as a processor receives it. The HTTP server has already validated `header` against the
 * command's zod schema (so a processor may treat it as the schema's output type). When the command's
 * spec declares a JSON request body (`requestBody`), the server has also parsed and validated the body
 * with that schema (HTTP 400 when it fails) and put the result in `parsedBody`; `body` stays the raw bytes.
 */
export interface BrokerRequest extends RemotingRequest<Record<string, unknown>> {
  parsedBody?: unknown;
}

/** A processor: one per request code, named after the command. */
export type Processor = (
  ctx: BrokerContext,
  request: BrokerRequest,
  connection: ConnectionInfo,
) => Promise<RemotingResponse>;
