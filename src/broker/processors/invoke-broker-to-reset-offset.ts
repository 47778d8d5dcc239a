/**
 * INVOKE_BROKER_TO_RESET_OFFSET (222): moves a group's offsets on a topic to a point in time
 * (RocketMQ's Broker2Client.resetOffset). Per write queue: the first offset stored at or after
 * `timestamp` (-1: the queue's end); without `isForce` an offset only moves back (the committed offset is
 * kept when it is already earlier). SYSTEM_ERROR when the topic is unknown or the group has no committed
 * offset on it.
 *
 * The offsets are committed at once, as RocketMQ 5's server-side reset does, so offline groups start
 * there too; until a queue's next pull by the group takes the new offset, the group's own commits for it
 * are ignored, and a pull from elsewhere is answered PULL_OFFSET_MOVED with it. Then, as RocketMQ 4's
 * Broker2Client.resetOffset, each member with a remoting connection that reads is sent
 * RESET_CONSUMER_CLIENT_OFFSET (oneway; header topic, group, timestamp, isForce; the same body), so it
 * moves at once instead of on its next pull's answer. Unlike RocketMQ 4, a group with no member online
 * is not an error. Body: ResetOffsetBody `{"offsetTable":{<MessageQueue>:n}}`.
 */
import {
  FastJsonMap,
  RequestCode,
  ResponseCode,
  toFastJson,
  type ResetOffsetRequestHeader,
} from '../../protocol/index.js';
import type { MessageQueue } from '../../common/message.js';
import type { Processor } from '../broker-context.js';
import { fail, ok } from './responses.js';

export const invokeBrokerToResetOffset: Processor = async (ctx, request) => {
  const h = request.header as ResetOffsetRequestHeader;
  const cfg = ctx.topicConfigManager.selectTopicConfig(h.topic);
  if (!cfg) {
    return fail(
      ResponseCode.SYSTEM_ERROR,
      `[reset-offset] reset offset failed, no topic in this broker. topic=${h.topic}`,
    );
  }
  const committed = ctx.consumerOffsetManager.offsetsOfGroup(h.group).get(h.topic);
  if (!committed || committed.size === 0) {
    return fail(ResponseCode.SYSTEM_ERROR, `THe consumer group <${h.group}> not exist`);
  }
  const plan: Array<[number, number]> = [];
  for (let queueId = 0; queueId < cfg.writeQueueNums; queueId++) {
    const consumerOffset = committed.get(queueId) ?? -1;
    let target =
      h.timestamp === -1
        ? ctx.store.getMaxOffsetInQueue(h.topic, queueId)
        : await ctx.store.getOffsetInQueueByTime(h.topic, queueId, h.timestamp);
    if (target < 0) target = 0;
    plan.push([queueId, h.isForce || consumerOffset < 0 || target < consumerOffset ? target : consumerOffset]);
  }
  const table = new FastJsonMap<MessageQueue, number>();
  for (const [queueId, offset] of plan) {
    ctx.consumerOffsetManager.assignResetOffset(h.topic, h.group, queueId, offset);
    table.entries.push([{ brokerName: ctx.brokerName, queueId, topic: h.topic }, offset]);
  }
  const body = Buffer.from(toFastJson({ offsetTable: table }), 'utf8');
  const extFields = { topic: h.topic, group: h.group, timestamp: String(h.timestamp), isForce: String(h.isForce) };
  let told = 0;
  for (const member of ctx.consumerManager.getConsumerGroupInfo(h.group)?.getChannels() ?? []) {
    const request = { code: RequestCode.RESET_CONSUMER_CLIENT_OFFSET, extFields, body };
    if (ctx.ops.sendOnewayToConsumer(member.clientId, h.group, request)) told++;
  }
  ctx.logger.info(
    { topic: h.topic, group: h.group, timestamp: h.timestamp, offsets: plan, membersTold: told },
    'consumer offsets reset',
  );
  return ok({}, undefined, body);
};
