// 09 — Ordered consumption: every message of one order id goes to one queue (shardingKey), and an
// orderly listener sees each order's steps in the order they were sent, one at a time. With
// `keyConcurrency`, different orders of one queue are handled in parallel.
// Run against a broker: node examples/09-orderly.mjs
import { ConsumeFromWhere, Producer, PushConsumer } from 'rocketmq-ts';
import { runIfMain, until } from './_run.mjs';

const STEPS = ['created', 'paid', 'shipped'];

export async function main(endpoints, { topic = 'ExampleOrderSteps', orders = 4, timeoutMs = 30_000 } = {}) {
  const producer = new Producer({ producerGroup: 'example_orderly_producer', endpoints });
  await producer.start();
  try {
    for (const step of STEPS)
      for (let o = 0; o < orders; o++)
        await producer.send({ topic, keys: `order-${o}`, body: Buffer.from(step) }, { shardingKey: `order-${o}` });
  } finally {
    await producer.shutdown();
  }
  const consumer = new PushConsumer({
    consumerGroup: `example_orderly_${topic}`,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  const seen = new Map();
  consumer.subscribe(topic, '*');
  consumer.registerMessageListenerOrderly(
    (messages) => {
      for (const m of messages) {
        const order = m.properties.KEYS;
        const steps = seen.get(order) ?? [];
        steps.push(m.body.toString());
        seen.set(order, steps);
        console.log(`${order}: ${m.body} (queue ${m.queueId})`);
      }
      // resolving with nothing is SUCCESS; a throw retries the same message before anything after it
    },
    { keyConcurrency: 4 },
  );
  await consumer.start();
  try {
    await until(
      () => [...seen.values()].reduce((n, s) => n + s.length, 0) >= orders * STEPS.length,
      timeoutMs,
      `${orders * STEPS.length} messages`,
    );
  } finally {
    await consumer.shutdown();
  }
  for (const [order, steps] of seen) console.log(`${order} in order: ${steps.join(' -> ')}`);
  return seen;
}

runIfMain(import.meta.url, main);
