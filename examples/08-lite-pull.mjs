// 08 — A lite pull consumer: the application sets the pace with `for await`. Each message is committed
// once the loop body that handled it has finished; breaking out commits nothing more.
// Run after 02: node examples/08-lite-pull.mjs
import { ConsumeFromWhere, LitePullConsumer } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', expected = 6, timeoutMs = 30_000 } = {}) {
  const consumer = new LitePullConsumer({
    consumerGroup: `example_lite_${topic}`,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  consumer.subscribe(topic, '*');
  await consumer.start();
  const received = [];
  const signal = globalThis.AbortSignal.timeout(timeoutMs);
  try {
    for await (const m of consumer.messages({ signal })) {
      console.log(`polled ${m.properties.KEYS} from queue ${m.queueId} at offset ${m.queueOffset}`);
      received.push(m);
      if (received.length >= expected) break;
    }
    if (received.length < expected) throw new Error(`timed out waiting for ${expected} messages`);
  } finally {
    await consumer.shutdown();
  }
  return received;
}

runIfMain(import.meta.url, main);
