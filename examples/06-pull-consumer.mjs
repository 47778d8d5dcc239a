// 06 — PullConsumer: you choose the queue, the offset and the batch, and commit offsets yourself.
// Run after 02: node examples/06-pull-consumer.mjs
import { PullConsumer, PullStatus } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders' } = {}) {
  const consumer = new PullConsumer({ consumerGroup: `example_pull_${topic}`, endpoints });
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
  return received;
}

runIfMain(import.meta.url, main);
