/**
 * GET_TOPIC_CONFIG (351): one topic's config as RocketMQ 5's TopicConfigAndQueueMapping, in fastjson's
 * form. RocketMQ 5's mqadmin asks it of every broker of a topic's route before topicStatus and the
 * static-topic commands; TOPIC_NOT_EXIST with RocketMQ's remark for a topic this broker does not hold.
 */
import { ResponseCode, toFastJson, type GetTopicConfigRequestHeader } from '../../protocol/index.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const getTopicConfig: Processor = (ctx, request) => {
  const { topic } = request.header as GetTopicConfigRequestHeader;
  const cfg = ctx.topicConfigManager.selectTopicConfig(topic);
  if (!cfg) return Promise.resolve(fail(ResponseCode.TOPIC_NOT_EXIST, `No topic in this broker. topic: ${topic}`));
  // The bundled broker has no static (logically mapped) topics, so `mappingDetail` is never written, whether
  // or not `lo` asks for it: RocketMQ leaves it out for a normal topic too, and mqadmin then reads the
  // physical queues as they are.
  const body = toFastJson({ ...cfg, attributes: {} });
  return Promise.resolve(ok({}, undefined, Buffer.from(body, 'utf8')));
};
