import { encodeMessage } from '../../../src/common/codec/index.js';
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

/** One stored record of topic T, queue 1, as a PULL_MESSAGE answer carries it. */
export function storedRecord(
  queueOffset: number,
  props: Record<string, string> | null,
  body = 'b',
  sysFlag = 0,
): Buffer {
  const host = { ip: '127.0.0.1', port: 10911 };
  return encodeMessage({
    topic: 'T',
    body: Buffer.from(body),
    bornHost: host,
    storeHost: host,
    queueId: 1,
    queueOffset,
    commitLogOffset: 1000 + queueOffset * 100,
    sysFlag,
    properties: props,
  });
}
