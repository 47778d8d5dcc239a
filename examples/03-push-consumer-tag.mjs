// 03 — A push consumer subscribed by tag: only the 'Paid' orders reach the listener.
// Run after 02: node examples/03-push-consumer-tag.mjs
import { ConsumeFromWhere, MessageSelector, PushConsumer } from 'rocketmq-ts';
import { runIfMain, until } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', expected = 3, timeoutMs = 30_000 } = {}) {
  const consumer = new PushConsumer({
    consumerGroup: `example_paid_${topic}`,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  const received = [];
  consumer.subscribe(topic, MessageSelector.byTag('Paid'));
  consumer.registerMessageListener((messages) => {
    for (const m of messages) {
      console.log(`received ${m.properties.KEYS} (tag ${m.properties.TAGS}): ${m.body}`);
      received.push(m);
    }
    // resolving with nothing is CONSUME_SUCCESS; a thrown error means RECONSUME_LATER
  });
  await consumer.start();
  try {
    await until(() => received.length >= expected, timeoutMs, `${expected} messages`);
  } finally {
    await consumer.shutdown();
  }
  return received;
}

runIfMain(import.meta.url, main);
