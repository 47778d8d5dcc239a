// 03 — A push consumer subscribed by tag: only the 'Paid' orders reach the listener. The group's
// offsets are kept on the broker, so a second run receives only the orders sent since the first.
// Run after 02: node examples/03-push-consumer-tag.mjs
import { ConsumeFromWhere, MessageSelector, PushConsumer } from 'rocketmq-ts';
import { requireTopic, runIfMain, untilCaughtUp } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', timeoutMs = 30_000 } = {}) {
  await requireTopic(endpoints, topic); // created by 02
  const group = `example_paid_${topic}`;
  const consumer = new PushConsumer({
    consumerGroup: group,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET, // a new group starts at the oldest order
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
    await untilCaughtUp(consumer, timeoutMs);
  } finally {
    await consumer.shutdown(); // commits the group's offsets
  }
  console.log(
    received.length > 0
      ? `${received.length} Paid orders; group ${group} has consumed ${topic} to the end`
      : `no new Paid orders: group ${group} consumed them in an earlier run (examples/02-produce.mjs sends more)`,
  );
  return received;
}

runIfMain(import.meta.url, main);
