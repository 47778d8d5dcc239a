/**
 * What MQClientInstance needs from a consumer it serves (RocketMQ's MQConsumerInner): the data of its
 * heartbeat, a rebalance step, offset persistence and route updates. PushConsumer, LitePullConsumer and
 * PullConsumer each register one per consumer group.
 * @pure
 */
import type { MessageExt, MessageQueue } from '../../common/message.js';
import type { ConnectionErrorListener } from './connection-errors.js';
import type { CheckTransactionStateRequestHeader } from '../../protocol/commands/end-transaction.js';
import type { ConsumeMessageDirectlyResult, ConsumerRunningInfo } from './consumer-running-info.js';
import type { SubscriptionDataLike } from './subscription-data-like.js';

export type { SubscriptionDataLike } from './subscription-data-like.js';

/** RocketMQ's MessageModel. */
export type MessageModelName = 'CLUSTERING' | 'BROADCASTING';
/** RocketMQ's ConsumeType: pull/lite consumers are ACTIVELY, push consumers PASSIVELY. */
export type ConsumeTypeName = 'CONSUME_ACTIVELY' | 'CONSUME_PASSIVELY' | 'CONSUME_POP';

/** `connectionError` (optional): an address it needs could not be reached, told once per address. */
export interface MQConsumerInner extends ConnectionErrorListener {
  groupName(): string;
  messageModel(): MessageModelName;
  consumeType(): ConsumeTypeName;
  /** A ConsumeFromWhere name, e.g. `CONSUME_FROM_LAST_OFFSET`. */
  consumeFromWhere(): string;
  /** Current subscriptions, the `%RETRY%group` one included where the consumer adds it. */
  subscriptions(): SubscriptionDataLike[];
  /**
   * One rebalance pass over every subscribed topic; called by RebalanceService. A topic that fails
   * should be logged, not thrown (a rejection is logged by the caller). Resolving `false` means "not
   * balanced yet" (RocketMQ's unbalanced result): the service then runs again after its minimum
   * interval (1 s) instead of the full period.
   */
  doRebalance(): Promise<void | boolean>;
  /** Persists the offsets of the queues it holds (every persistConsumerOffsetIntervalMs and at shutdown). */
  persistConsumerOffset(): Promise<void>;
  /** The route of `topic` changed: `mqs` are its readable queues now. */
  updateTopicSubscribeInfo(topic: string, mqs: MessageQueue[]): void;
  /** Whether the instance should refresh the route of `topic` for this consumer (default: subscribed). */
  isSubscribeTopicNeedUpdate?(topic: string): boolean;
  /** What GET_CONSUMER_RUNNING_INFO reports (`mqadmin consumerStatus`); consumers without it answer an error. */
  runningInfo?(): ConsumerRunningInfo;
  /** CONSUME_MESSAGE_DIRECTLY: runs the listener on `msg` outside the queues and reports the result. */
  consumeMessageDirectly?(msg: MessageExt, brokerName: string | undefined): Promise<ConsumeMessageDirectlyResult>;
  /**
   * RESET_CONSUMER_CLIENT_OFFSET (RocketMQ: MQClientInstance.resetOffset): the group's offsets on `topic`
   * were moved by an administrator; the queues held among `offsetTable` drop what they have cached and
   * consume from their new offset. Consumers without it find out from their next pull's answer.
   */
  resetOffset?(topic: string, offsetTable: ReadonlyArray<readonly [MessageQueue, number]>): Promise<void>;
}

/** What MQClientInstance needs from a producer: its group (heartbeat, unregister); `connectionError` as above. */
export interface MQProducerInner extends ConnectionErrorListener {
  groupName(): string;
  /**
   * A transactional producer answers the broker's CHECK_TRANSACTION_STATE about `msg`, sent by the broker
   * at `addr` (RocketMQ: MQProducerInner.checkTransactionState); plain producers have none.
   */
  checkTransactionState?(addr: string, msg: MessageExt, header: CheckTransactionStateRequestHeader): void;
}
