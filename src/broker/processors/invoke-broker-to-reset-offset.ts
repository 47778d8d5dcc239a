/**
 * INVOKE_BROKER_TO_RESET_OFFSET (222): moves a group's offsets on a topic to a point in time
 * (RocketMQ's Broker2Client.resetOffset). Per write queue: the first offset stored at or after
 * `timestamp` (-1: the queue's end); without `isForce` an offset only moves back (the committed offset is
 * kept when it is already earlier). SYSTEM_ERROR when the topic is unknown or the group has no committed
 * offset on it.
 *
 * Where RocketMQ 4 sends RESET_CONSUMER_CLIENT_OFFSET to each online member (and fails when none is
 * online), this broker resets on the server side, as RocketMQ 5 does: the offsets are committed at once
 * and each queue's next pull by the group is answered PULL_OFFSET_MOVED with the new offset, so online
 * consumers move there and offline groups start there. Body: ResetOffsetBody `{"offsetTable":{<MessageQueue>:n}}`.
 */
import { FastJsonMap, ResponseCode, toFastJson, type ResetOffsetRequestHeader } from '../../protocol/index.js';
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
  ctx.logger.info({ topic: h.topic, group: h.group, timestamp: h.timestamp, offsets: plan }, 'consumer offsets reset');
  return ok({}, undefined, Buffer.from(toFastJson({ offsetTable: table }), 'utf8'));
};
