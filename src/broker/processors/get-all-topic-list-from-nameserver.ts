/**
 * GET_ALL_TOPIC_LIST_FROM_NAMESERVER (206): the NameServer's topic list, which the bundled broker
 * answers itself (it is its own route source): `{"topicList":[...]}`, system topics included, as a
 * RocketMQ NameServer lists them.
 */
import { toFastJson } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { ok } from './responses.js';

export const getAllTopicListFromNameserver: Processor = (ctx) => {
  const topicList = ctx.topicConfigManager
    .allTopics()
    .map((t) => t.topicName)
    .sort();
  return Promise.resolve(ok({}, undefined, Buffer.from(toFastJson({ topicList }), 'utf8')));
};
