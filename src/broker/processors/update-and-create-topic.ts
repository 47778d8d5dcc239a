/**
 * UPDATE_AND_CREATE_TOPIC (17): RocketMQ's AdminBrokerProcessor.updateAndCreateTopic. The name is
 * validated (TopicValidator.validateTopic: SYSTEM_ERROR with its remarks), a system topic is refused,
 * queue numbers, perm and topicSysFlag are checked against the limits `topics.json` is loaded with
 * (INVALID_PARAMETER), then the config is created or replaced and persisted.
 */
import { ResponseCode, type CreateTopicRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { topicConfigProblem } from '../topic-config-manager.js';
import { fail, ok } from './responses.js';
import { isSystemTopic, validateTopicRemark } from './topic-validator.js';

export const updateAndCreateTopic: Processor = (ctx, request) => {
  const h = request.header as CreateTopicRequestHeader;
  const problem = validateTopicRemark(h.topic);
  if (problem) return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, problem));
  if (isSystemTopic(h.topic, ctx)) {
    return Promise.resolve(fail(ResponseCode.SYSTEM_ERROR, `The topic[${h.topic}] is conflict with system topic.`));
  }
  const invalid = topicConfigProblem(h);
  if (invalid) return Promise.resolve(fail(ResponseCode.INVALID_PARAMETER, invalid));
  ctx.topicConfigManager.updateTopicConfig({
    topicName: h.topic,
    readQueueNums: h.readQueueNums,
    writeQueueNums: h.writeQueueNums,
    perm: h.perm,
    topicFilterType: h.topicFilterType === 'MULTI_TAG' ? 'MULTI_TAG' : 'SINGLE_TAG',
    topicSysFlag: h.topicSysFlag ?? 0,
    order: h.order ?? false,
  });
  ctx.logger.info({ topic: h.topic }, 'topic created or updated');
  return Promise.resolve(ok());
};
