// 11 — Retry and the dead-letter queue. A listener that throws gets its message again later, through
// the group's retry topic %RETRY%<group>; after `maxReconsumeTimes` failed retries the message is
// parked in the dead-letter queue %DLQ%<group>. The DLQ is created write-only (as RocketMQ does), so
// an admin makes it readable (mqadmin updateTopic -p 6), and a PullConsumer reads what was parked.
// Run against a broker: node examples/11-retry-dead-letter.mjs
import {
  AdminClient,
  ConsumeFromWhere,
  MessageSelector,
  Producer,
  PullConsumer,
  PullStatus,
  PushConsumer,
} from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { timeoutMs = 60_000 } = {}) {
  const run = Date.now().toString(36); // a topic and group of this run's own
  const topic = `ExamplePayments_${run}`;
  const group = `example_retry_${run}`;
  const dlq = `%DLQ%${group}`;

  const producer = new Producer({ producerGroup: 'example_retry_producer', endpoints });
  await producer.start();
  try {
    for (const [i, card] of ['valid', 'expired', 'valid'].entries())
      await producer.send({ topic, keys: `payment-${i}`, properties: { card }, body: Buffer.from(`payment ${i}`) });
  } finally {
    await producer.shutdown();
  }

  const consumer = new PushConsumer({
    consumerGroup: group,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
    maxReconsumeTimes: 2, // two retries, then the dead-letter queue
  });
  consumer.subscribe(topic, MessageSelector.byTag('*'));
  let failures = 0;
  consumer.registerMessageListener((messages, context) => {
    for (const m of messages) {
      if (m.properties.card === 'expired') {
        failures += 1;
        console.log(`attempt ${m.reconsumeTimes + 1} of ${m.properties.KEYS} failed`);
        context.delayLevelWhenNextConsume = 1; // retry after 1 s (default: level 3 + retries, 10 s first)
        throw new Error('card expired'); // RECONSUME_LATER: the message comes back through %RETRY%
      }
      console.log(`consumed ${m.properties.KEYS}`);
    }
  });

  const admin = new AdminClient({ endpoints });
  const parked = [];
  try {
    await consumer.start();
    const dlqSize = async () => {
      try {
        return (await admin.topicStatus(dlq)).reduce((n, q) => n + q.maxOffset, 0);
      } catch {
        return 0; // not created yet
      }
    };
    let size = 0;
    const deadline = Date.now() + timeoutMs;
    while ((size = await dlqSize()) < 1) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for a message in ${dlq}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    console.log(`${failures} failed attempts; ${dlq} holds ${size} message(s)`);

    // Make the DLQ readable, then read it like any topic.
    await admin.createTopic(dlq, { queueNums: 1, perm: 6 });
    const reader = new PullConsumer({ consumerGroup: `${group}_dlq_reader`, endpoints });
    await reader.start();
    try {
      for (const mq of await reader.fetchSubscribeMessageQueues(dlq)) {
        const result = await reader.pull(mq, '*', 0, 32);
        if (result.pullStatus !== PullStatus.FOUND) continue;
        for (const m of result.msgFoundList) {
          console.log(
            `dead letter ${m.properties.KEYS}: ${m.body} (from ${m.properties.RETRY_TOPIC}, reconsumeTimes ${m.reconsumeTimes}, original id ${m.properties.ORIGIN_MESSAGE_ID})`,
          );
          parked.push(m);
        }
      }
    } finally {
      await reader.shutdown();
    }
  } finally {
    await consumer.shutdown();
    await admin.shutdown();
  }
  return parked;
}

runIfMain(import.meta.url, main);
