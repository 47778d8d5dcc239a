/**
 * The dead-letter rule shared by the two ways a retry reaches the broker (RocketMQ's
 * AbstractSendMessageProcessor.consumerSendMsgBack and SendMessageProcessor.handleRetryAndDLQ apply
 * the same one): a message whose reconsumeTimes has reached maxReconsumeTimes goes to `%DLQ%<group>`,
 * a topic of one queue created on first use with the same perm whichever path created it.
 *
 * That perm is WRITE by default, so dead letters are consumed only once an admin makes the topic
 * readable (UPDATE_AND_CREATE_TOPIC with perm 6), as RocketMQ did up to 4.9.2; RocketMQ 4.9.3 and later
 * create it READ|WRITE, which the broker option `dlqReadable: true` does here.
 */
import { dlqTopic } from '../../common/message.js';
import { PermName } from '../../protocol/index.js';
import type { BrokerContext } from '../broker-context.js';

/** RocketMQ: AbstractSendMessageProcessor.DLQ_NUMS_PER_GROUP. */
export const DLQ_NUMS_PER_GROUP = 1;

/** The perm a new `%DLQ%` topic gets: WRITE, or READ|WRITE with the broker option `dlqReadable`. */
export function dlqTopicPerm(ctx: BrokerContext): number {
  return ctx.brokerConfig.dlqReadable ? PermName.READ | PermName.WRITE : PermName.WRITE;
}

/** RocketMQ: a retry is dead-lettered once `reconsumeTimes >= maxReconsumeTimes`. */
export function pastMaxReconsumeTimes(reconsumeTimes: number, maxReconsumeTimes: number): boolean {
  return reconsumeTimes >= maxReconsumeTimes;
}

/**
 * `%DLQ%<group>`, created when missing, and the queue to put a dead letter on; `fromTopic` (the retry or
 * original topic) labels the dead-letter count of the broker metrics.
 */
export function deadLetterQueueOf(
  ctx: BrokerContext,
  group: string,
  fromTopic: string,
): { topic: string; queueId: number } {
  ctx.ops.stats.metrics.onSendToDlq(group, fromTopic);
  const topic = dlqTopic(group);
  ctx.topicConfigManager.createTopicIfAbsent(topic, DLQ_NUMS_PER_GROUP, dlqTopicPerm(ctx), 0);
  return { topic, queueId: Math.floor(Math.random() * DLQ_NUMS_PER_GROUP) };
}
