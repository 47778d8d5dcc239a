// 06 — PullConsumer: you choose the queue, the offset and the batch, and commit offsets yourself.
// The offsets committed here stay on the broker: a second run reads only what was sent since.
// Run after 02: node examples/06-pull-consumer.mjs
import { PullConsumer, PullStatus } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders' } = {}) {
  const group = `example_pull_${topic}`;
  const consumer = new PullConsumer({ consumerGroup: group, endpoints });
  await consumer.start();
  const received = [];
  try {
    for (const mq of await consumer.fetchSubscribeMessageQueues(topic)) {
      let offset = Math.max(0, await consumer.fetchConsumeOffset(mq)); // -1: nothing committed yet
      for (;;) {
        const result = await consumer.pull(mq, '*', offset, 32);
        if (result.pullStatus !== PullStatus.FOUND) break;
        for (const m of result.msgFoundList) {
          console.log(`queue ${mq.queueId} offset ${m.queueOffset}: ${m.properties.KEYS}`);
          received.push(m);
        }
        offset = result.nextBeginOffset;
        await consumer.updateConsumeOffset(mq, offset); // committed on the broker now
      }
    }
  } finally {
    await consumer.shutdown();
  }
  if (received.length === 0)
    console.log(`nothing new: group ${group} has committed ${topic} to the end (examples/02-produce.mjs sends more)`);
  return received;
}

runIfMain(import.meta.url, main);
