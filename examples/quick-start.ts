/**
 * Quick start: send a few tagged messages, then consume the ones whose tag matches with a push
 * consumer, and shut both down. `main(endpoints)` takes a broker address and is run by the test suite
 * against an in-process broker (STYLE habit 11), so this code is known to work.
 */
import {
  ConsumeConcurrentlyStatus,
  ConsumeFromWhere,
  MessageSelector,
  Producer,
  PushConsumer,
  type MessageExt,
} from '../src/index.js';

export interface QuickStartOptions {
  /** Messages to send (half tagged `Paid`, half `Cancelled`). */
  count?: number;
  /** Where progress is reported. */
  log?: (line: string) => void;
  /** Gives up waiting for the messages after this long. */
  timeoutMs?: number;
}

/** Sends `count` messages to a fresh topic and returns the `Paid` ones as a push consumer received them. */
export async function main(endpoints: string, options: QuickStartOptions = {}): Promise<MessageExt[]> {
  const { count = 10, log = () => {}, timeoutMs = 30_000 } = options;
  const topic = `QuickStart_${Date.now()}_${process.pid}`;

  const producer = new Producer({ producerGroup: 'quick_start_producer', endpoints });
  await producer.start();
  try {
    for (let i = 0; i < count; i++) {
      const tags = i % 2 === 0 ? 'Paid' : 'Cancelled';
      const r = await producer.send({ topic, tags, keys: `order-${i}`, body: Buffer.from(`order ${i} ${tags}`) });
      log(`sent ${r.msgId} to queue ${r.messageQueue.queueId} at offset ${r.queueOffset}`);
    }
  } finally {
    await producer.shutdown();
  }

  const received: MessageExt[] = [];
  const expected = Math.ceil(count / 2);
  const consumer = new PushConsumer({
    consumerGroup: `quick_start_consumer_${process.pid}`,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  const done = new Promise<void>((resolve) => {
    consumer.subscribe(topic, MessageSelector.byTag('Paid'));
    consumer.registerMessageListener(async (messages) => {
      for (const m of messages) {
        log(`received ${m.properties?.KEYS} from queue ${m.queueId}: ${m.body?.toString()}`);
        received.push(m);
      }
      if (received.length >= expected) resolve();
      return ConsumeConcurrentlyStatus.CONSUME_SUCCESS; // a thrown error counts as RECONSUME_LATER
    });
  });
  await consumer.start();
  try {
    const timeout = AbortSignal.timeout(timeoutMs);
    await Promise.race([
      done,
      new Promise((_, reject) =>
        timeout.addEventListener('abort', () => reject(new Error(`no ${expected} messages within ${timeoutMs} ms`))),
      ),
    ]);
  } finally {
    await consumer.shutdown();
  }
  return received;
}
