/**
 * RocketMQ's TopicValidator checks with its remarks (SYSTEM_ERROR answers), and the system topics.
 */
import { TOPIC_MAX_LENGTH } from '../../common/names.js';
import { SCHEDULE_TOPIC } from '../../common/message.js';
import { AUTO_CREATE_TOPIC_KEY_TOPIC } from '../../protocol/index.js';
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
  return (
    topic === AUTO_CREATE_TOPIC_KEY_TOPIC ||
    topic === SCHEDULE_TOPIC ||
    topic === 'SELF_TEST_TOPIC' ||
    topic === 'OFFSET_MOVED_EVENT' ||
    topic === 'BenchmarkTest' ||
    topic === 'RMQ_SYS_TRACE_TOPIC' ||
    topic === 'RMQ_SYS_TRANS_HALF_TOPIC' ||
    topic === 'RMQ_SYS_TRANS_OP_HALF_TOPIC' ||
    topic === 'TRANS_CHECK_MAX_TIME_TOPIC' ||
    topic === ctx.clusterName ||
    topic === ctx.brokerName ||
    topic.startsWith('rmq_sys_')
  );
}
