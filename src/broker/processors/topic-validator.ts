/**
 * RocketMQ's TopicValidator checks with its remarks (SYSTEM_ERROR answers), and the system topics.
 */
import { TOPIC_MAX_LENGTH } from '../../common/names.js';
import { isSystemTopicName } from '../../common/message.js';
import type { BrokerContext } from '../broker-context.js';

const VALID = /^[%|a-zA-Z0-9_-]+$/;

/** RocketMQ: TopicValidator.validateTopic — the remark when the name is refused, else null. */
export function validateTopicRemark(topic: string): string | null {
  if (topic.trim().length === 0) return 'The specified topic is blank.';
  if (!VALID.test(topic)) return 'The specified topic contains illegal characters, allowing only ^[%|a-zA-Z0-9_-]+$';
  if (topic.length > TOPIC_MAX_LENGTH) return 'The specified topic is longer than topic max length.';
  return null;
}

/** RocketMQ: TopicValidator.isSystemTopic (the system topics this broker knows, and the rmq_sys_ prefix). */
export function isSystemTopic(topic: string, ctx: BrokerContext): boolean {
  return isSystemTopicName(topic) || topic === ctx.clusterName || topic === ctx.brokerName;
}
