// 08 — A lite pull consumer: the application sets the pace with `for await`. Each message is committed
// once the loop body that handled it has finished; breaking out commits nothing more. The loop ends
// once no message has come for a while, so a second run reads only what was sent since the first.
// Run after 02: node examples/08-lite-pull.mjs
import { ConsumeFromWhere, LitePullConsumer } from 'rocketmq-ts';
import { runIfMain } from './_run.mjs';

export async function main(endpoints, { topic = 'ExampleOrders', idleMs = 2000 } = {}) {
  const group = `example_lite_${topic}`;
  const consumer = new LitePullConsumer({
    consumerGroup: group,
    endpoints,
    consumeFromWhere: ConsumeFromWhere.CONSUME_FROM_FIRST_OFFSET,
  });
  consumer.subscribe(topic, '*');
  await consumer.start();
  const received = [];
  try {
    const queues = await consumer.fetchMessageQueues(topic); // ERR_TOPIC_NOT_EXIST before 02 created it
    console.log(`${topic} has ${queues.length} queues`);
    await consumer.ready; // queues held, the first pull of each answered or held by the broker
    const idle = new AbortController();
    const idleTimer = setTimeout(() => idle.abort(), idleMs);
    for await (const m of consumer.messages({ signal: idle.signal })) {
      idleTimer.refresh(); // a message came: wait idleMs again from now
      console.log(`polled ${m.properties.KEYS} from queue ${m.queueId} at offset ${m.queueOffset}`);
      received.push(m);
    }
  } finally {
    await consumer.shutdown(); // commits what the loop finished
  }
  if (received.length === 0)
    console.log(`nothing new: group ${group} consumed ${topic} in an earlier run (examples/02-produce.mjs sends more)`);
  return received;
}

runIfMain(import.meta.url, main);
