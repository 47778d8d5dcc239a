// 04 — An SQL92 subscription on user properties: only orders with amount >= 60 in region 'us'.
// Run after 02: node examples/04-sql92.mjs
import { ConsumeFromWhere, MessageSelector, PushConsumer } from 'rocketmq-ts';
import { runIfMain, until } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', expected = 3, timeoutMs = 30_000 } = {}) {
  const consumer = new PushConsumer({
    consumerGroup: `example_big_us_${topic}`,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  const received = [];
  consumer.subscribe(topic, MessageSelector.bySql("amount >= 60 AND region = 'us'"));
  consumer.registerMessageListener((messages) => {
    for (const m of messages) {
      console.log(`received ${m.properties.KEYS}: amount=${m.properties.amount} region=${m.properties.region}`);
      received.push(m);
    }
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
