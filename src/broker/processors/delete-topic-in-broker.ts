/**
 * DELETE_TOPIC_IN_BROKER (215), and DELETE_TOPIC_IN_NAMESRV (216) which the bundled broker answers the
 * same way (its route is its topic table). RocketMQ's AdminBrokerProcessor.deleteTopic: a system topic
 * is refused (SYSTEM_ERROR), otherwise the topic's config and consume queues are removed (the commit
 * log keeps the bytes until retention), and so are the committed offsets of every group on it.
 * Deleting an unknown topic succeeds, as in RocketMQ.
 */
import { ResponseCode, type DeleteTopicRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';
import { isSystemTopic } from './topic-validator.js';

export const deleteTopicInBroker: Processor = (ctx, request) => {
  const { topic } = request.header as DeleteTopicRequestHeader;
  if (isSystemTopic(topic, ctx)) {
    return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, `The topic[${topic}] is conflict with system topic.`));
  }
  const existed = ctx.topicConfigManager.deleteTopicConfig(topic);
  const queues = ctx.store.deleteTopic(topic);
  const groups = ctx.consumerOffsetManager.removeOffsetsOfTopic(topic);
  ctx.logger.info({ topic, existed, queues, groups }, 'topic deleted');
  return Promise.resolve(ok());
};
