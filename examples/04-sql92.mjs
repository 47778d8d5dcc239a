// 04 — An SQL92 subscription on user properties: only orders with amount >= 60 in region 'us'. The
// group's offsets are kept on the broker, so a second run receives only the orders sent since the first.
// Run after 02: node examples/04-sql92.mjs
import { ConsumeFromWhere, MessageSelector, PushConsumer } from 'rocketmq-ts';
import { requireTopic, runIfMain, untilCaughtUp } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', timeoutMs = 30_000 } = {}) {
  await requireTopic(endpoints, topic); // created by 02
  const group = `example_big_us_${topic}`;
  const consumer = new PushConsumer({
    consumerGroup: group,
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
    await untilCaughtUp(consumer, timeoutMs);
  } finally {
    await consumer.shutdown();
  }
  console.log(
    received.length > 0
      ? `${received.length} matching orders; group ${group} has consumed ${topic} to the end`
      : `no new matching orders: group ${group} consumed them in an earlier run (examples/02-produce.mjs sends more)`,
  );
  return received;
}

runIfMain(import.meta.url, main);
