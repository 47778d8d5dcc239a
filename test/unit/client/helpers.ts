import type { MessageExt, MessageQueue } from '../../../src/common/message.js';

export const mqOf = (queueId: number, topic = 'T', brokerName = 'b'): MessageQueue => ({ topic, brokerName, queueId });

/** A MessageExt with just what the consumer side reads. */
export function msgAt(queueOffset: number, bodyBytes = 10, extra: Partial<MessageExt> = {}): MessageExt {
  return {
    topic: 'T',
    flag: 0,
    body: Buffer.alloc(bodyBytes),
    properties: null,
    queueId: 0,
    queueOffset,
    commitLogOffset: 1000 + queueOffset,
    sysFlag: 0,
    bornTimestamp: 0,
    bornHost: { ip: '127.0.0.1', port: 1 },
    storeTimestamp: 0,
    storeHost: { ip: '127.0.0.1', port: 2 },
    reconsumeTimes: 0,
    preparedTransactionOffset: 0,
    bodyCRC: 0,
    storeSize: 100,
    msgId: `id-${queueOffset}`,
    ...extra,
  };
}
