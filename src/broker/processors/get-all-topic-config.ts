/**
 * GET_ALL_TOPIC_CONFIG (21): every topic config of the broker, as RocketMQ's
 * TopicConfigSerializeWrapper (`dataVersion`, `topicConfigTable`), in fastjson's form.
 */
import { FastJsonMap, toFastJson } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getAllTopicConfig: Processor = (ctx) => {
  const topics = ctx.topicConfigManager.allTopics().sort((a, b) => a.topicName.localeCompare(b.topicName));
  const body = toFastJson({
    dataVersion: ctx.topicConfigManager.getDataVersion(),
    topicConfigTable: new FastJsonMap(topics.map((t) => [t.topicName, t])),
  });
  return Promise.resolve(ok({}, undefined, Buffer.from(body, 'utf8')));
};
