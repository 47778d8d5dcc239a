// 02 — Send messages with a tag, keys and user properties.
// Run against a broker (npx rocketmq-ts broker --store /tmp/rmq): node examples/02-produce.mjs
import { Producer } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', count = 6 } = {}) {
  const producer = new Producer({ producerGroup: 'example_producer', endpoints });
  await producer.start();
  const results = [];
  try {
    for (let i = 0; i < count; i++) {
      const r = await producer.send({
        topic,
        tags: i % 2 === 0 ? 'Paid' : 'Cancelled',
        keys: `order-${i}`,
        properties: { amount: String(i * 20), region: i < 3 ? 'eu' : 'us' },
        body: Buffer.from(JSON.stringify({ order: i })),
      });
      console.log(
        `sent order-${i}: ${r.sendStatus} msgId=${r.msgId} queue=${r.messageQueue.queueId} offset=${r.queueOffset}`,
      );
      results.push(r);
    }
  } finally {
    await producer.shutdown();
  }
  return results;
}

runIfMain(import.meta.url, main);
