/**
 * How the trace dispatcher sends: one SEND_MESSAGE to a writable queue of the trace topic, through the
 * client instance's MQClientAPI and route table, as RocketMQ's trace producer does (the queues taken in
 * turn, the message's KEYS being the records' keys). No fallback to the template topic: a trace topic
 * the brokers do not have is an error the dispatcher counts, not a topic the client creates.
 */
import { RocketMQError } from '../../common/errors.js';
import { MessageConst } from '../../common/message.js';
import { createUniqId, messageProperties2String } from '../../common/codec/index.js';
import type { SendMessageRequestHeader } from '../../protocol/commands/index.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import type { TraceSend } from './async-trace-dispatcher.js';

/** A trace topic without a route is looked up again after this long, not for every batch. */
const MISSING_ROUTE_RETRY_MS = 30_000;

/** The TraceSend of `instance`, sending as producer group `group`. */
export function instanceTraceSender(instance: MQClientInstance, group: string): TraceSend {
  let next = 0;
  let missingUntil = 0;
  const { clock } = instance.options;
  return async (topic, body, keys, timeoutMs) => {
    if (clock.now() < missingUntil)
      throw new RocketMQError('ERR_TOPIC_NOT_EXIST', `the trace topic ${topic} does not exist`);
    const info = await instance.getTopicPublishInfo(topic);
    const mqs = info?.messageQueues ?? [];
    if (mqs.length === 0) {
      missingUntil = clock.now() + MISSING_ROUTE_RETRY_MS;
      throw new RocketMQError('ERR_TOPIC_NOT_EXIST', `the trace topic ${topic} does not exist or is not writable`);
    }
    const mq = mqs[next++ % mqs.length]!;
    const addr = instance.findBrokerAddressInPublish(mq.brokerName);
    if (addr === undefined) throw new RocketMQError('ERR_BROKER_NOT_EXIST', `the broker[${mq.brokerName}] not exist`);
    const properties = messageProperties2String({
      [MessageConst.KEYS]: keys.join(MessageConst.KEY_SEPARATOR),
      [MessageConst.WAIT]: 'true',
      [MessageConst.UNIQ_KEY]: createUniqId(clock),
    });
    const header: SendMessageRequestHeader = {
      producerGroup: group,
      topic,
      defaultTopic: 'TBW102',
      defaultTopicQueueNums: 4,
      queueId: mq.queueId,
      sysFlag: 0,
      bornTimestamp: clock.now(),
      flag: 0,
      properties,
      reconsumeTimes: 0,
      unitMode: false,
      bname: mq.brokerName,
    };
    await instance.api.sendMessage(addr, header, body, { timeoutMs });
  };
}
