/**
 * CONSUMER_SEND_MSG_BACK (36) — RocketMQ: AbstractSendMessageProcessor.consumerSendMsgBack.
 *
 * 1. the subscription group must exist (auto-created when enabled): else SUBSCRIPTION_GROUP_NOT_EXIST;
 * 2. the broker must be writable: else NO_PERMISSION;
 * 3. retryQueueNums <= 0: SUCCESS and the message is dropped;
 * 4. `%RETRY%<group>` is created when missing (retryQueueNums queues, RW) and must be writable;
 * 5. the message is looked up by its COMMIT-LOG offset: else SYSTEM_ERROR `look message by offset failed, <offset>`;
 * 6. RETRY_TOPIC is set to its topic unless it has one, WAIT=false;
 * 7. max reconsume times: the header's when given, else the group's retryMaxTimes (16);
 *    reconsumeTimes >= max or delayLevel < 0 → `%DLQ%<group>` (1 queue, DELAY=0), else
 *    DELAY = delayLevel, or 3 + reconsumeTimes when the client asked for 0;
 * 8. a new message (same body, flag, sysFlag, born time and host, properties as above, this broker's
 *    store host, reconsumeTimes + 1, ORIGIN_MESSAGE_ID = the one it carries or its offset message id)
 *    goes through the send path (so DELAY moves it to SCHEDULE_TOPIC_XXXX): PUT_OK → SUCCESS, else
 *    SYSTEM_ERROR with the PutMessageStatus name as remark.
 *
 * The dead-letter rule (the threshold, the topic and its perm) is the send path's too: see
 * dead-letter-queue.ts.
 */
import { createMessageId } from '../../common/codec/index.js';
import { MessageConst, retryTopic, type MessageExt } from '../../common/message.js';
import { FAQ_SUFFIX, PermName, ResponseCode, type ConsumerSendMsgBackRequestHeader } from '../../protocol/index.js';
import type { MessageToStore } from '../../store/index.js';
import type { Processor } from '../broker-context.js';
import { deadLetterQueueOf, pastMaxReconsumeTimes } from './dead-letter-queue.js';
import { fail, ok } from './responses.js';

const FLAG_UNIT_SUB = 0x2;

const randomQueueId = (n: number): number => Math.floor(Math.random() * n);

/** RocketMQ's offset message id of a stored message (MessageExt.getMsgId on the broker side). */
function offsetMsgIdOf(msg: MessageExt): string {
  return msg.offsetMsgId ?? createMessageId(msg.storeHost, msg.commitLogOffset);
}

export const consumerSendMsgBack: Processor = async (ctx, request) => {
  const h = request.header as ConsumerSendMsgBackRequestHeader;
  const config = ctx.subscriptionGroupManager.findSubscriptionGroupConfig(h.group);
  if (!config) {
    const limit = ctx.subscriptionGroupManager.autoCreateLimitRemark?.();
    return fail(
      ResponseCode.SUBSCRIPTION_GROUP_NOT_EXIST,
      `subscription group not exist, ${h.group} ${limit ? `${limit} ` : ''}${FAQ_SUFFIX}`,
    );
  }
  if ((ctx.brokerConfig.brokerPermission & PermName.WRITE) === 0) {
    return fail(ResponseCode.NO_PERMISSION, `the broker[${ctx.brokerIP}] sending message is forbidden`);
  }
  if (config.retryQueueNums <= 0) return ok();

  let newTopic = retryTopic(h.group);
  let queueId = randomQueueId(config.retryQueueNums);
  const retryConfig = ctx.topicConfigManager.createTopicIfAbsent(
    newTopic,
    config.retryQueueNums,
    PermName.READ | PermName.WRITE,
    h.unitMode ? FLAG_UNIT_SUB : 0,
  );
  if ((retryConfig.perm & PermName.WRITE) === 0) {
    return fail(ResponseCode.NO_PERMISSION, `the topic[${newTopic}] sending message is forbidden`);
  }

  const msgExt = await ctx.lookMessageByOffset(h.offset);
  if (!msgExt) return fail(ResponseCode.SYSTEM_ERROR, `look message by offset failed, ${h.offset}`);

  const properties: Record<string, string> = { ...(msgExt.properties ?? {}) };
  if (properties[MessageConst.RETRY_TOPIC] === undefined) properties[MessageConst.RETRY_TOPIC] = msgExt.topic;
  properties[MessageConst.WAIT] = 'false';

  let delayLevel = h.delayLevel;
  const maxReconsumeTimes = h.maxReconsumeTimes ?? config.retryMaxTimes;
  const toDlq = pastMaxReconsumeTimes(msgExt.reconsumeTimes, maxReconsumeTimes) || delayLevel < 0;
  if (toDlq) {
    ({ topic: newTopic, queueId } = deadLetterQueueOf(ctx, h.group, h.originTopic ?? msgExt.topic));
    properties[MessageConst.DELAY] = '0';
  } else {
    if (delayLevel === 0) delayLevel = 3 + msgExt.reconsumeTimes;
    properties[MessageConst.DELAY] = String(delayLevel);
  }
  const origin = properties[MessageConst.ORIGIN_MESSAGE_ID];
  if (origin === undefined || origin.trim() === '') properties[MessageConst.ORIGIN_MESSAGE_ID] = offsetMsgIdOf(msgExt);

  const inner: MessageToStore = {
    topic: newTopic,
    queueId,
    flag: msgExt.flag,
    body: msgExt.body ?? Buffer.alloc(0),
    properties,
    sysFlag: msgExt.sysFlag,
    bornTimestamp: msgExt.bornTimestamp,
    bornHost: { ...msgExt.bornHost },
    // storeHost left out: the store writes this broker's own.
    reconsumeTimes: msgExt.reconsumeTimes + 1,
    preparedTransactionOffset: 0,
  };
  const result = await ctx.putMessage(inner);
  if (result.status === 'PUT_OK') {
    if (toDlq) {
      ctx.logger.info(
        { dlq: newTopic, group: h.group, originTopic: h.originTopic, uniqKey: properties[MessageConst.UNIQ_KEY] },
        'send msg to DLQ',
      );
    }
    return ok();
  }
  return fail(ResponseCode.SYSTEM_ERROR, result.status);
};
