// 07 — Graceful shutdown on SIGINT / SIGTERM (Ctrl-C, `docker stop`, Kubernetes): stop pulling, let
// the listeners in flight finish, commit offsets, leave the group.
// Run: node examples/07-graceful-shutdown.mjs   (then press Ctrl-C)
import process from 'node:process';
import { ConsumeFromWhere, MessageSelector, PushConsumer } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', signal } = {}) {
  const consumer = new PushConsumer({
    consumerGroup: 'example_graceful',
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  let consumed = 0;
  consumer.subscribe(topic, MessageSelector.byTag('*'));
  consumer.registerMessageListener(async (messages) => {
    await new Promise((r) => setTimeout(r, 10)); // some work
    consumed += messages.length;
  });
  await consumer.start();
  const stopped = new Promise((resolve) => {
    const stop = (why) => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      signal?.removeEventListener('abort', stop);
      console.log(`${typeof why === 'string' ? why : 'abort'}: shutting down after ${consumed} messages`);
      resolve(consumer.shutdown());
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
    signal?.addEventListener('abort', stop, { once: true });
  });
  // The handlers are in place before the prompt: a signal sent as soon as it shows is handled.
  console.log(`consuming ${topic}; press Ctrl-C to stop`);
  await stopped;
  console.log('consumer stopped cleanly');
  return consumed;
}

runIfMain(import.meta.url, main);
