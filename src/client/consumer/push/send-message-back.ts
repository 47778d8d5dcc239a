/**
 * Handing a failed message back for a later retry (RocketMQ: DefaultMQPushConsumerImpl.sendMessageBack,
 * ConsumeMessageConcurrentlyService.sendMessageBack): CONSUMER_SEND_MSG_BACK to the master of the queue's broker, and on any error the
 * fallback — a plain SEND of a copy to `%RETRY%<group>` with the properties RocketMQ sets. Throws
 * only when both fail; the caller then keeps the message and consumes it again locally.
 */
import { RocketMQError } from '../../../common/errors.js';
import type { Logger } from '../../../common/logger.js';
import { MessageConst, retryTopic, type MessageExt, type MessageQueue } from '../../../common/message.js';
import { messageProperties2String } from '../../../common/codec/index.js';
import type { SendMessageRequestHeader } from '../../../protocol/commands/index.js';
import type { MQClientInstance } from '../../instance/mq-client-instance.js';

/** RocketMQ: the send-back timeout, 5000 ms. */
export const SEND_MESSAGE_BACK_TIMEOUT_MS = 5000;
/** RocketMQ: MixAll.CLIENT_INNER_PRODUCER_GROUP, the group of the fallback send. */
const CLIENT_INNER_PRODUCER_GROUP = 'CLIENT_INNER_PRODUCER';
/** RocketMQ: TopicValidator.AUTO_CREATE_TOPIC_KEY_TOPIC and its default queue count. */
const AUTO_CREATE_TOPIC_KEY = 'TBW102';
const DEFAULT_TOPIC_QUEUE_NUMS = 4;

/** The properties of the fallback copy (RocketMQ: sendMessageBackAsNormalMessage). */
export function retryCopyProperties(msg: MessageExt, maxReconsumeTimes: number): Record<string, string> {
  const props: Record<string, string> = { ...(msg.properties ?? {}) };
  props[MessageConst.ORIGIN_MESSAGE_ID] = props[MessageConst.ORIGIN_MESSAGE_ID] ?? msg.msgId;
  props[MessageConst.RETRY_TOPIC] = msg.topic;
  props[MessageConst.RECONSUME_TIME] = String(msg.reconsumeTimes + 1);
  props[MessageConst.MAX_RECONSUME_TIMES] = String(maxReconsumeTimes);
  delete props[MessageConst.TRAN_MSG];
  props[MessageConst.DELAY] = String(3 + msg.reconsumeTimes);
  return props;
}

export async function sendMessageBack(
  instance: MQClientInstance,
  consumerGroup: string,
  msg: MessageExt,
  delayLevel: number,
  mq: MessageQueue,
  maxReconsumeTimes: number,
  logger: Logger,
): Promise<void> {
  try {
    const addr =
      instance.findBrokerAddressInPublish(mq.brokerName) ?? (await instance.findBrokerAddressForQueue(mq)).brokerAddr;
    await instance.api.consumerSendMessageBack(addr, mq.brokerName, msg, consumerGroup, delayLevel, maxReconsumeTimes, {
      timeoutMs: SEND_MESSAGE_BACK_TIMEOUT_MS,
    });
    return;
  } catch (err) {
    logger.warn(
      { err, msgId: msg.msgId, group: consumerGroup },
      'CONSUMER_SEND_MSG_BACK failed; sending the message to the retry topic',
    );
  }
  await sendBackAsNormalMessage(instance, consumerGroup, msg, maxReconsumeTimes);
}

async function sendBackAsNormalMessage(
  instance: MQClientInstance,
  consumerGroup: string,
  msg: MessageExt,
  maxReconsumeTimes: number,
): Promise<void> {
  const topic = retryTopic(consumerGroup);
  const props = retryCopyProperties(msg, maxReconsumeTimes);
  // RocketMQ's producer moves these two into the header for a retry topic.
  const reconsumeTimes = Number(props[MessageConst.RECONSUME_TIME]);
  delete props[MessageConst.RECONSUME_TIME];
  delete props[MessageConst.MAX_RECONSUME_TIMES];
  const info = await instance.getTopicPublishInfo(topic);
  const queues = info?.messageQueues ?? [];
  const mq = queues[Math.floor(Math.random() * queues.length)];
  if (!mq) throw new RocketMQError('ERR_TOPIC_NOT_EXIST', `no writable queue for ${topic}`, { retriable: true });
  const addr = instance.findBrokerAddressInPublish(mq.brokerName);
  if (addr === undefined)
    throw new RocketMQError('ERR_BROKER_NOT_EXIST', `the broker[${mq.brokerName}] not exist`, { retriable: true });
  const header: SendMessageRequestHeader = {
    producerGroup: CLIENT_INNER_PRODUCER_GROUP,
    topic,
    defaultTopic: AUTO_CREATE_TOPIC_KEY,
    defaultTopicQueueNums: DEFAULT_TOPIC_QUEUE_NUMS,
    queueId: mq.queueId,
    sysFlag: 0,
    bornTimestamp: instance.options.clock.now(),
    flag: msg.flag,
    properties: messageProperties2String(props),
    reconsumeTimes,
    unitMode: false,
    maxReconsumeTimes,
    bname: mq.brokerName,
  };
  await instance.api.sendMessage(addr, header, msg.body ?? Buffer.alloc(0), {
    timeoutMs: SEND_MESSAGE_BACK_TIMEOUT_MS,
  });
}
