/**
 * The producer's batch paths, both sent as one SEND_BATCH_MESSAGE: `sendBatch(messages)` (RocketMQ's
 * DefaultMQProducer.send(Collection), with its checks: one topic, no delay level, no retry topic), and
 * autoBatch, where the plain sends of one event-loop turn that SendAccumulator grouped travel together
 * and the broker's answer is split back into each send's own result.
 */
import { InvalidArgumentError } from '../../common/errors.js';
import { MessageConst, RETRY_GROUP_TOPIC_PREFIX, type Message, type MessageQueue } from '../../common/message.js';
import { createUniqId, encodeBatchBody, messageProperties2String } from '../../common/codec/index.js';
import type { SendMessageRequestHeader } from '../../protocol/commands/index.js';
import type { MQClientInstance } from '../instance/mq-client-instance.js';
import type { ResolvedProducerOptions } from './producer-options.js';
import type { ProducerSender, SendRequest } from './producer-send.js';
import type { SendOptions, SendResult } from './producer-types.js';
import { checkMessage, messageToProperties } from './validators.js';

/** A send waiting for the others of its turn (autoBatch): what it needs to go alone or in a batch. */
export interface QueuedSend {
  readonly instance: MQClientInstance;
  /** Its header if it goes alone. */
  readonly header: SendMessageRequestHeader;
  readonly body: Buffer;
  readonly uniqId: string;
  readonly resolve: (result: SendResult) => void;
  readonly reject: (err: unknown) => void;
}

/** The header of a SEND_BATCH_MESSAGE (its messages carry their own properties in the body). */
export function batchHeader(o: ResolvedProducerOptions, topic: string): SendMessageRequestHeader {
  return {
    producerGroup: o.producerGroup,
    topic,
    defaultTopic: o.createTopicKey,
    defaultTopicQueueNums: o.defaultTopicQueueNums,
    queueId: 0,
    sysFlag: 0,
    bornTimestamp: 0,
    flag: 0,
    properties: messageProperties2String({ [MessageConst.WAIT]: 'true' }),
    reconsumeTimes: 0,
    unitMode: false,
    batch: true,
    bname: '', // set per attempt (see ProducerSender.sendDefaultImpl)
  };
}

/** The checked and encoded messages of a `sendBatch`: their topic, the batch body and the joined msgIds. */
export function encodeSendBatch(
  messages: readonly Message[],
  o: ResolvedProducerOptions,
): { topic: string; body: Buffer; msgId: string } {
  if (!Array.isArray(messages) || messages.length === 0)
    throw new InvalidArgumentError('messages', 'a batch needs at least one message');
  const topic = messages[0]!.topic;
  const uniqIds: string[] = [];
  const elements = messages.map((m, i) => {
    checkMessage(m, o.maxMessageSizeBytes, o.createTopicKey, `messages[${i}]`);
    if (m.topic !== topic)
      throw new InvalidArgumentError(`messages[${i}].topic`, 'every message of a batch must have the same topic');
    if (m.delayTimeLevel !== undefined && m.delayTimeLevel > 0)
      throw new InvalidArgumentError(`messages[${i}].delayTimeLevel`, 'delay levels are not supported in a batch');
    if (m.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX))
      throw new InvalidArgumentError(`messages[${i}].topic`, 'retry topics are not supported in a batch');
    const props = messageToProperties(m);
    let id = props.get(MessageConst.UNIQ_KEY);
    if (id === undefined) {
      id = createUniqId(o.clock);
      props.set(MessageConst.UNIQ_KEY, id);
    }
    uniqIds.push(id);
    return { body: m.body, flag: m.flag ?? 0, properties: props };
  });
  const body = encodeBatchBody(elements);
  if (body.length > o.maxMessageSizeBytes)
    throw new InvalidArgumentError(
      'messages',
      `the batch size ${body.length} is over max value ${o.maxMessageSizeBytes}`,
    );
  return { topic, body, msgId: uniqIds.join(',') };
}

/**
 * Whether a plain send may wait for the others of its turn: not ordered, no per-send signal or
 * deadline, not compressed, not to a retry topic, not delayed, and waiting for the store (WAIT).
 */
export function canAutoBatch(
  message: Message,
  opts: SendOptions,
  choose: ((mqs: readonly MessageQueue[]) => MessageQueue) | undefined,
  req: SendRequest,
): boolean {
  return (
    choose === undefined &&
    opts.signal === undefined &&
    opts.timeoutMs === undefined &&
    req.header.sysFlag === 0 &&
    !message.topic.startsWith(RETRY_GROUP_TOPIC_PREFIX) &&
    req.props.get(MessageConst.DELAY) === undefined &&
    req.props.get(MessageConst.WAIT) === 'true'
  );
}

/**
 * Sends the sends of one turn (see SendAccumulator): a lone one as it is, several as one batch whose
 * answer is split into each send's own result (the broker stores a batch's messages one after the
 * other on its queue and answers with the first queue offset and every offset message id).
 */
export function dispatchSendTurn(
  sender: ProducerSender,
  o: ResolvedProducerOptions,
  topic: string,
  sends: QueuedSend[],
): void {
  const first = sends[0]!;
  if (sends.length === 1) {
    sender
      .sendDefaultImpl(first.instance, topic, first.header, first.body, first.uniqId, {})
      .then(first.resolve, first.reject);
    return;
  }
  let body: Buffer;
  try {
    // Each send's properties as its header already carries them: joined once.
    body = encodeBatchBody(sends.map((x) => ({ body: x.body, flag: x.header.flag, properties: x.header.properties })));
  } catch (err) {
    for (const x of sends) x.reject(err);
    return;
  }
  sender.sendDefaultImpl(first.instance, topic, batchHeader(o, topic), body, '', {}).then(
    (r) => {
      const offsetMsgIds = r.offsetMsgId.split(',');
      for (let i = 0; i < sends.length; i++) {
        const x = sends[i]!;
        x.resolve({
          sendStatus: r.sendStatus,
          msgId: x.uniqId,
          offsetMsgId: offsetMsgIds.length === sends.length ? offsetMsgIds[i]! : r.offsetMsgId,
          messageQueue: { ...r.messageQueue },
          queueOffset: r.queueOffset + i,
          transactionId: r.transactionId,
        });
      }
    },
    (err: unknown) => {
      for (const x of sends) x.reject(err);
    },
  );
}
